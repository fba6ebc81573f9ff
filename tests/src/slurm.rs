//! A one-machine Slurm cluster for a test: munged with its own key, socket
//! and pid file, slurmctld and slurmd in the foreground from a generated
//! slurm.conf, everything under one directory and every daemon a child of
//! the test. Dropping the cluster (also on a panic) cancels its jobs and
//! kills the daemons by pid.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The partition jobs go to.
const PARTITION: &str = "faultline";
/// How long the daemons get to come up.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running cluster.
pub struct Slurm {
    dir: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

impl Slurm {
    /// Starts munged, slurmctld and slurmd under `dir` and waits until the
    /// node is idle; panics saying which daemon did not come up and why.
    pub fn start(dir: &Path) -> Slurm {
        for tool in [
            "munged",
            "mungekey",
            "slurmctld",
            "slurmd",
            "sbatch",
            "sinfo",
        ] {
            assert!(
                which(tool).is_some(),
                "{tool} is not installed: scripts/setup installs Debian's slurm-wlm and munge"
            );
        }
        let mut cluster = Slurm {
            dir: dir.to_owned(),
            daemons: Vec::new(),
        };
        for sub in ["munge", "run", "state", "spool", "log"] {
            fs::create_dir_all(dir.join(sub)).expect("create cluster dirs");
        }
        // munged refuses a key others can read, and a socket directory
        // others cannot enter.
        set_mode(&dir.join("munge"), 0o700);
        set_mode(&dir.join("run"), 0o755);
        let key = dir.join("munge/munge.key");
        let made = Command::new(which("mungekey").expect("checked"))
            .arg("--create")
            .arg(format!("--keyfile={}", key.display()))
            .output()
            .expect("run mungekey");
        assert!(made.status.success(), "mungekey: {made:?}");
        let socket = dir.join("run/munge.sock");
        cluster.spawn(
            "munged",
            Command::new(which("munged").expect("checked"))
                .arg("--foreground")
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!(
                    "--pid-file={}",
                    dir.join("run/munged.pid").display()
                ))
                .arg(format!(
                    "--log-file={}",
                    dir.join("log/munged.log").display()
                ))
                .arg(format!("--seed-file={}", dir.join("munge/seed").display())),
        );
        cluster.wait_for("munged", || socket.exists());
        fs::write(cluster.conf(), slurm_conf(dir, &socket)).expect("write slurm.conf");
        cluster.spawn(
            "slurmctld",
            Command::new(which("slurmctld").expect("checked"))
                .args(["-D", "-i", "-f"])
                .arg(cluster.conf()),
        );
        cluster.spawn(
            "slurmd",
            Command::new(which("slurmd").expect("checked"))
                .args(["-D", "-N", "localhost", "-f"])
                .arg(cluster.conf()),
        );
        let conf = cluster.conf();
        cluster.wait_for("slurmd", || {
            Command::new("sinfo")
                .env("SLURM_CONF", &conf)
                .args(["-h", "-o", "%T"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        cluster
    }

    /// The generated slurm.conf.
    pub fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// A Slurm client command (sbatch, squeue, ...) talking to this cluster.
    pub fn command(&self, tool: &str) -> Command {
        let mut c = Command::new(tool);
        c.env("SLURM_CONF", self.conf());
        c
    }

    /// The daemons' logs, for a failure message.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for name in ["munged.log", "slurmctld.log", "slurmd.log"] {
            let text = fs::read_to_string(self.dir.join("log").join(name)).unwrap_or_default();
            out.push_str(&format!(
                "--- {name}:\n{}\n",
                crate::exec::tail(&text, 3000)
            ));
        }
        for (name, _) in &self.daemons {
            let text = fs::read_to_string(self.dir.join(format!("{name}.out"))).unwrap_or_default();
            out.push_str(&format!(
                "--- {name} output:\n{}\n",
                crate::exec::tail(&text, 2000)
            ));
        }
        out
    }

    fn spawn(&mut self, name: &'static str, command: &mut Command) {
        let out = fs::File::create(self.dir.join(format!("{name}.out"))).expect("daemon output");
        let child = command
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("dup"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.daemons.push((name, child));
    }

    /// Polls `ready` until it holds; panics with the logs if a daemon exits
    /// or START_TIMEOUT passes.
    fn wait_for(&mut self, what: &str, ready: impl Fn() -> bool) {
        let deadline = Instant::now() + START_TIMEOUT;
        while !ready() {
            let exited = self
                .daemons
                .iter_mut()
                .find_map(|(name, child)| Some((*name, child.try_wait().ok()??)));
            if let Some((name, status)) = exited {
                panic!(
                    "{name} exited ({status}) while waiting for {what}\n{}",
                    self.logs()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{what} not ready after {START_TIMEOUT:?}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        // The jobs' processes belong to slurmstepd, not to us: cancel them
        // and give the node a moment to clean up before stopping it.
        let _ = self.command("scancel").args(["-p", PARTITION]).output();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline
            && self
                .command("squeue")
                .args(["-h", "-p", PARTITION])
                .output()
                .is_ok_and(|o| !o.stdout.is_empty())
        {
            std::thread::sleep(Duration::from_millis(200));
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// slurm.conf for one node with 2 CPUs on loopback, every path under `dir`,
/// nothing that needs cgroups, systemd or a database.
fn slurm_conf(dir: &Path, munge_socket: &Path) -> String {
    let d = dir.display();
    let [ctld_port, slurmd_port] = free_ports();
    format!(
        "ClusterName=faultline\n\
SlurmctldHost=localhost(127.0.0.1)\n\
SlurmctldPort={ctld_port}\n\
SlurmdPort={slurmd_port}\n\
SlurmUser=root\n\
SlurmdUser=root\n\
AuthType=auth/munge\n\
AuthInfo=socket={sock}\n\
CredType=cred/munge\n\
StateSaveLocation={d}/state\n\
SlurmdSpoolDir={d}/spool\n\
SlurmctldPidFile={d}/run/slurmctld.pid\n\
SlurmdPidFile={d}/run/slurmd.pid\n\
SlurmctldLogFile={d}/log/slurmctld.log\n\
SlurmdLogFile={d}/log/slurmd.log\n\
ProctrackType=proctrack/linuxproc\n\
TaskPlugin=task/none\n\
JobAcctGatherType=jobacct_gather/none\n\
AccountingStorageType=accounting_storage/none\n\
SelectType=select/cons_tres\n\
SelectTypeParameters=CR_CPU\n\
SchedulerType=sched/builtin\n\
MpiDefault=none\n\
ReturnToService=2\n\
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
PartitionName={PARTITION} Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n",
        sock = munge_socket.display(),
    )
}

/// Two distinct loopback ports nothing listens on now.
fn free_ports() -> [u16; 2] {
    let bind = || TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let held = [bind(), bind()];
    held.map(|l| l.local_addr().expect("bound address").port())
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `tool` on $PATH or in /usr/sbin (where Debian puts the daemons).
fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file());
    found
}
