//! Reads of machine and process state: `sysinfo`, and opens of the `/proc`
//! and `/sys` files that describe the machine (uptime, load, memory, CPU
//! time, online CPUs) or the program's own processes (`/proc/self/stat`,
//! `status`, `/proc/<pid>/...` of its namespace's pids). The simulated
//! versions come from `sim::machine`; an open is pointed at a stand-in file
//! written for that open.

use std::path::PathBuf;

use super::{err, ret, Action, Call};
use crate::sim::machine::{self, HostView, ProcView};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::vclock::{MONOTONIC_BASE_NS, NS};

/// What an open of a `/proc` or `/sys` path reads under faultline.
enum Target {
    /// Simulated contents.
    Text(String),
    /// A simulated directory of the CPUs (`/sys/devices/system/cpu`, whose
    /// `cpuN` entries glibc's `get_nprocs_conf` counts).
    CpuDir,
    /// The host's file of the process, under its host pid.
    HostPath(PathBuf),
    /// The host's file, unchanged.
    Host,
}

impl Sim {
    /// uname succeeded: the whole `struct utsname` at `addr` becomes the
    /// simulated machine's (its host name, faultline's kernel), so neither
    /// the host's name nor its kernel release reach the program.
    pub(crate) fn uname_answered(&mut self, mem: &impl Memory, pid: i32, addr: u64) {
        let uts = machine::utsname(&self.node_of(pid));
        if let Err(e) = mem.write_mem(addr, &uts) {
            self.report_once(
                crate::sim::diagnostics::DiagKind::InternalError,
                format!("cannot write uname's answer ({e}); the host's is seen"),
            );
        }
    }

    /// The stand-in file an open of `path` by `c`'s process must read
    /// instead, if faultline simulates it (None: the path is opened as is).
    pub(super) fn machine_stand_in(
        &mut self,
        c: &Call<impl Memory>,
        path: &[u8],
    ) -> Option<PathBuf> {
        let path = std::str::from_utf8(path).ok()?;
        let (name, target) = match self.machine_target(c.pid, path) {
            Target::Host => return None,
            Target::HostPath(p) => return Some(p),
            Target::CpuDir => return self.cpu_dir(path),
            Target::Text(text) => (path.trim_start_matches('/').replace('/', "-"), text),
        };
        let dir = self.net.stand_in_dir();
        let file = dir.join(format!("{}-{name}", c.pid));
        // Written aside and renamed, so an earlier open of it keeps its text.
        let tmp = dir.join(format!(".{}-{name}", c.pid));
        match std::fs::write(&tmp, target).and_then(|()| std::fs::rename(&tmp, &file)) {
            Ok(()) => Some(file),
            Err(e) => {
                self.report_once(
                    crate::sim::diagnostics::DiagKind::InternalError,
                    format!("cannot write the simulated {path} ({e}); the host's is read"),
                );
                None
            }
        }
    }

    /// The simulated CPU directory: `cpu0` .. `cpuN-1` and the CPU lists,
    /// made once per run and CPU count.
    fn cpu_dir(&mut self, path: &str) -> Option<PathBuf> {
        let cpus = self.cpus.max(1);
        let dir = self.net.stand_in_dir().join(format!("sys-cpu-{cpus}"));
        let list = machine::cpu_list(cpus);
        let made = (0..cpus)
            .try_for_each(|i| std::fs::create_dir_all(dir.join(format!("cpu{i}"))))
            .and_then(|()| {
                ["online", "possible", "present"]
                    .iter()
                    .try_for_each(|f| std::fs::write(dir.join(f), &list))
            });
        match made {
            Ok(()) => Some(dir),
            Err(e) => {
                self.report_once(
                    crate::sim::diagnostics::DiagKind::InternalError,
                    format!("cannot make the simulated {path} ({e}); the host's is read"),
                );
                None
            }
        }
    }

    /// What `path`, opened by process `pid`, reads.
    fn machine_target(&self, pid: i32, path: &str) -> Target {
        if matches!(path, "/sys/devices/system/cpu" | "/sys/devices/system/cpu/") {
            return Target::CpuDir;
        }
        if let Some(which) = path.strip_prefix("/sys/devices/system/cpu/") {
            return match which {
                "online" | "possible" | "present" => Target::Text(machine::cpu_list(self.cpus)),
                _ => Target::Host,
            };
        }
        let Some(rest) = path.strip_prefix("/proc/") else {
            return Target::Host;
        };
        match rest {
            "uptime" => return Target::Text(machine::uptime(&self.host_view(pid))),
            "loadavg" => return Target::Text(machine::loadavg(&self.host_view(pid))),
            "meminfo" => return Target::Text(machine::meminfo()),
            "stat" => return Target::Text(machine::stat(&self.host_view(pid))),
            "version" => return Target::Text(machine::proc_version()),
            "sys/kernel/osrelease" => {
                return Target::Text(format!("{}\n", machine::KERNEL_RELEASE))
            }
            "sys/kernel/version" => return Target::Text(format!("{}\n", machine::KERNEL_VERSION)),
            "sys/kernel/hostname" => return Target::Text(format!("{}\n", self.node_of(pid))),
            _ => {}
        }
        let (first, file) = rest.split_once('/').unwrap_or((rest, ""));
        let own = match first {
            "self" | "thread-self" => Some(pid),
            n => match n.parse::<i32>() {
                Ok(ns_pid) => Some(self.pid_in_namespace(pid, ns_pid).unwrap_or(0)),
                Err(_) => None,
            },
        };
        let Some(target) = own else {
            return Target::Host;
        };
        if target == 0 {
            // Not a pid of the program's namespace: it does not exist.
            return Target::HostPath(self.net.stand_in_dir().join("no-such-pid"));
        }
        match file {
            "stat" => Target::Text(machine::proc_stat(&self.proc_view(target))),
            "statm" => Target::Text(machine::proc_statm()),
            "limits" => Target::Text(self.procs[&target].rlimits.proc_limits()),
            // SAFETY: getuid and getgid cannot fail.
            "status" => Target::Text(machine::proc_status(
                &self.proc_view(target),
                unsafe { libc::getuid() },
                unsafe { libc::getgid() },
            )),
            _ if first.starts_with(|ch: char| ch.is_ascii_digit()) => {
                Target::HostPath(PathBuf::from(format!("/proc/{target}/{file}")))
            }
            _ => Target::Host,
        }
    }

    /// The host pid of the process `ns_pid` names in `pid`'s namespace.
    pub(super) fn pid_in_namespace(&self, pid: i32, ns_pid: i32) -> Option<i32> {
        let root = self.procs.get(&pid)?.ns_root;
        self.procs
            .values()
            .find(|p| p.ns_root == root && p.ns_pid == ns_pid)
            .map(|p| p.pid)
    }

    /// The machine that process `pid` runs on, now.
    fn host_view(&self, pid: i32) -> HostView {
        let host = self.procs.get(&pid).map(|p| p.host);
        let on_host: Vec<&crate::sim::world::Process> = self
            .procs
            .values()
            .filter(|p| Some(p.host) == host)
            .collect();
        let clock_host = self.clock_host(pid);
        let uptime_ns = self.clock.read_on(clock_host, libc::CLOCK_BOOTTIME) as u64;
        let real = self.clock.read_on(clock_host, libc::CLOCK_REALTIME);
        HostView {
            uptime_ns,
            boot_secs: ((real - uptime_ns as i128) / NS as i128) as i64,
            cpus: self.cpus,
            busy_ns: on_host.iter().map(|p| self.cpu.process(p.pid)).sum(),
            procs: on_host.len() as u32,
            threads: self
                .threads
                .values()
                .filter(|t| on_host.iter().any(|p| p.pid == t.pid))
                .count() as u32,
            last_pid: on_host.iter().map(|p| p.ns_pid).max().unwrap_or(1),
        }
    }

    /// Process `pid` as its /proc files show it.
    fn proc_view(&self, pid: i32) -> ProcView {
        let p = &self.procs[&pid];
        let ppid = p
            .parent
            .and_then(|pp| self.procs.get(&pp))
            .map_or(1, |pp| pp.ns_pid);
        let base = p.name.rsplit('/').next().unwrap_or("");
        ProcView {
            pid: p.ns_pid,
            ppid,
            comm: base.chars().take(15).collect(),
            threads: self.threads.values().filter(|t| t.pid == pid).count() as u32,
            cpu_ns: self.cpu.process(pid),
            children_ns: self.cpu.children(pid),
            start_ns: MONOTONIC_BASE_NS + p.start_ns,
        }
    }

    /// sysinfo: the simulated machine's uptime, memory and process count.
    pub(super) fn sys_sysinfo(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let h = self.host_view(c.pid);
        let uptime = h.uptime_ns / NS;
        targs.push(uptime as i64);
        // struct sysinfo: uptime, loads[3], totalram, freeram, sharedram,
        // bufferram, totalswap, freeswap, procs (u16, padded), totalhigh,
        // freehigh, mem_unit (u32, padded): 112 bytes.
        let info: [u64; 14] = [
            uptime,
            0,
            0,
            0,
            machine::MEM_TOTAL,
            machine::MEM_FREE,
            0,
            0,
            0,
            0,
            u64::from(h.procs.min(u32::from(u16::MAX))),
            0,
            0,
            1,
        ];
        if c.mem().write_val(c.a[0], &info).is_err() {
            return err(libc::EFAULT);
        }
        ret(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, TempDir, PID};
    use crate::sim::machine::{KERNEL_RELEASE, MEM_TOTAL};
    use crate::sim::memory::Memory;
    use crate::sim::vclock::NS;

    const BUF: u64 = 0x1000;

    /// Field `i` of a `struct utsname`, up to its NUL.
    fn uts_field(uts: &[u8], i: usize) -> String {
        let field = &uts[i * 65..(i + 1) * 65];
        let end = field.iter().position(|&b| b == 0).unwrap_or(65);
        String::from_utf8_lossy(&field[..end]).into_owned()
    }

    #[test]
    fn uname_shows_the_simulated_host_and_kernel() {
        let mut sim = world();
        let mem = zeroed(BUF, 390);
        mem.write_mem(BUF, &[b'x'; 390]).unwrap();
        sim.uname_answered(&mem, PID, BUF);
        let mut uts = [0u8; 390];
        mem.read_mem(BUF, &mut uts).unwrap();
        let fields: Vec<String> = (0..3).map(|i| uts_field(&uts, i)).collect();
        assert_eq!(fields, ["Linux", "n1", KERNEL_RELEASE]);
        // An answer that cannot be written is reported, not ignored.
        sim.uname_answered(&zeroed(BUF, 8), PID, BUF);
        let diags = std::mem::take(&mut sim.diagnostics).into_list();
        assert!(diags[0].message.contains("uname"), "{}", diags[0].message);
    }

    #[test]
    fn sysinfo_describes_the_simulated_machine() {
        let mut sim = world();
        sim.clock.advance_to(5 * NS);
        let c = call(libc::SYS_sysinfo, [BUF, 0, 0, 0, 0, 0], zeroed(BUF, 112));
        let mut targs = vec![];
        assert_eq!(returned(sim.sys_sysinfo(&c, &mut targs)), 0);
        let info: [u64; 14] = c.mem().read_val(BUF).unwrap();
        assert_eq!(info[4], MEM_TOTAL);
        assert_eq!(info[10], 1, "one process");
        assert_eq!(info[13], 1, "mem_unit");
        assert_eq!(info[0] as i64, targs[0], "uptime in the trace");
        let c = call(libc::SYS_sysinfo, [0x9000, 0, 0, 0, 0, 0], zeroed(BUF, 112));
        assert_eq!(
            returned(sim.sys_sysinfo(&c, &mut vec![])),
            -(libc::EFAULT as i64)
        );
    }

    #[test]
    fn machine_files_are_replaced_by_simulated_ones() {
        let mut sim = world();
        let dir = TempDir(sim.net.stand_in_dir().to_path_buf());
        std::fs::create_dir_all(&dir.0).unwrap();
        let c = call(libc::SYS_openat, [0; 6], zeroed(BUF, 8));
        let read = |p: Option<std::path::PathBuf>| std::fs::read_to_string(p.unwrap()).unwrap();
        let online = sim.machine_stand_in(&c, b"/sys/devices/system/cpu/online");
        assert_eq!(read(online), "0-1\n");
        let hostname = sim.machine_stand_in(&c, b"/proc/sys/kernel/hostname");
        assert_eq!(read(hostname), "n1\n");
        let stat = read(sim.machine_stand_in(&c, b"/proc/self/stat"));
        assert!(stat.starts_with(&format!("{PID} (")), "{stat}");
        // A pid outside the program's namespace does not exist.
        let other = sim.machine_stand_in(&c, b"/proc/4242/status").unwrap();
        assert!(!other.exists());
        assert_eq!(sim.machine_stand_in(&c, b"/proc/self/maps"), None);
        assert_eq!(sim.machine_stand_in(&c, b"/etc/passwd"), None);
    }
}
