//! Running `faultline exec` with a wall-clock kill timeout, and what a run
//! produced.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use crate::paths::faultline_bin;
use crate::program::Program;
use crate::summary::Summary;

/// Wall-clock limit for one faultline run; a run still going after it is
/// killed (with its whole process group) and the test fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long to wait for the output pipes to close after faultline exited. If
/// they stay open, some process outlived the supervisor and still holds them.
const PIPE_CLOSE_GRACE: Duration = Duration::from_secs(10);

/// Prefix of every line faultline itself writes to stderr.
pub const LINE_PREFIX: &str = "faultline: ";

/// A `faultline exec [options] -- PROGRAM [ARGS...]` invocation (builder).
#[derive(Clone, Debug)]
pub struct Exec {
    program: OsString,
    args: Vec<OsString>,
    seed: Option<String>,
    trace: Option<PathBuf>,
    check_determinism: bool,
    epoch: Option<String>,
    cpus: Option<u32>,
    options: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    timeout: Duration,
}

impl Exec {
    /// Runs `program` (a path or a name looked up by faultline) with default options.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            seed: None,
            trace: None,
            check_determinism: false,
            epoch: None,
            cpus: None,
            options: Vec::new(),
            env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Runs a test program, building it first if needed.
    pub fn program(program: Program) -> Self {
        Self::new(program.path())
    }

    /// Appends an argument for the program.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// `--seed S` with S in decimal.
    pub fn seed(self, seed: u64) -> Self {
        self.seed_text(&seed.to_string())
    }

    /// `--seed S` with S exactly as given (e.g. `"0x7"`).
    pub fn seed_text(mut self, seed: &str) -> Self {
        self.seed = Some(seed.to_owned());
        self
    }

    /// `--trace FILE`.
    pub fn trace(mut self, file: impl Into<PathBuf>) -> Self {
        self.trace = Some(file.into());
        self
    }

    /// `--check-determinism`.
    pub fn check_determinism(mut self) -> Self {
        self.check_determinism = true;
        self
    }

    /// `--epoch RFC3339`.
    pub fn epoch(mut self, epoch: &str) -> Self {
        self.epoch = Some(epoch.to_owned());
        self
    }

    /// `--cpus N`.
    pub fn cpus(mut self, cpus: u32) -> Self {
        self.cpus = Some(cpus);
        self
    }

    /// Any other `faultline exec` option with its value, e.g.
    /// `.option("--signal-at", "10s:TERM")`.
    pub fn option(mut self, flag: &str, value: &str) -> Self {
        self.options.push(flag.into());
        self.options.push(value.into());
        self
    }

    /// A faultline flag without a value (e.g. `--no-vdso`).
    pub fn flag(mut self, flag: &str) -> Self {
        self.options.push(flag.into());
        self
    }

    /// `--host NAME`: run the program on simulated host NAME (address
    /// 127.77.0.1), with the simulated network.
    pub fn host(self, name: &str) -> Self {
        self.option("--host", name)
    }

    /// Replaces the wall-clock kill timeout ([`DEFAULT_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets an environment variable of faultline (and so of the program).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The seed option as given, if any.
    pub fn seed_option(&self) -> Option<&str> {
        self.seed.as_deref()
    }

    /// The faultline command line, ready to spawn (stdio not configured).
    pub fn command(&self) -> Command {
        let mut command = Command::new(faultline_bin());
        command.arg("exec");
        if let Some(seed) = &self.seed {
            command.arg("--seed").arg(seed);
        }
        if let Some(trace) = &self.trace {
            command.arg("--trace").arg(trace);
        }
        if self.check_determinism {
            command.arg("--check-determinism");
        }
        if let Some(epoch) = &self.epoch {
            command.arg("--epoch").arg(epoch);
        }
        if let Some(cpus) = self.cpus {
            command.arg("--cpus").arg(cpus.to_string());
        }
        command.args(&self.options);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command.arg("--").arg(&self.program).args(&self.args);
        command
    }

    /// Starts faultline in its own process group with piped stdin, stdout
    /// and stderr, for tests that interact with a running supervisor.
    pub fn spawn(&self) -> Child {
        let mut command = self.command();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        spawn_or_explain(&mut command)
    }

    /// Runs faultline to completion (stdin is /dev/null) and captures its
    /// output. Panics if the run exceeds the timeout, if faultline was killed
    /// by a signal, or if its output pipes stay open after it exited.
    pub fn run(&self) -> Run {
        run_command(self.command(), self.timeout)
    }
}

/// Runs a faultline `command` (any verb) to completion with stdin from
/// /dev/null, in its own process group, and captures its output. Panics if
/// the run exceeds `timeout` (the group is killed), if faultline was killed
/// by a signal, or if its output pipes stay open after it exited.
pub fn run_command(mut command: Command, timeout: Duration) -> Run {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let description = describe(&command);
    let start = Instant::now();
    let mut child = spawn_or_explain(&mut command);
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let status = wait_until(&mut child, start + timeout);
    let wall = start.elapsed();
    let Some(status) = status else {
        kill_group(&child);
        let _ = child.wait();
        let stdout = collect(&stdout, PIPE_CLOSE_GRACE).unwrap_or_default();
        let stderr = collect(&stderr, PIPE_CLOSE_GRACE).unwrap_or_default();
        panic!(
            "{description}\ntimed out after {timeout:?} (killed)\n--- stdout:\n{}\n--- stderr:\n{}",
            tail(&String::from_utf8_lossy(&stdout), 4000),
            tail(&String::from_utf8_lossy(&stderr), 8000)
        );
    };
    let (Some(stdout), Some(stderr)) = (
        collect(&stdout, PIPE_CLOSE_GRACE),
        collect(&stderr, PIPE_CLOSE_GRACE),
    ) else {
        kill_group(&child);
        panic!("{description}\nexited ({status}) but its stdout/stderr stayed open: a process outlived it");
    };
    let run = Run {
        description,
        stdout,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        status,
        wall,
    };
    if let Some(signal) = status.signal() {
        panic!("faultline itself was killed by signal {signal}\n{run}");
    }
    log_trace_hashes(&run);
    run
}

/// With `$FAULTLINE_HASH_LOG` set, appends every run's command line and its
/// lines that carry a trace hash to that file: the record that an engine
/// change left every run of the suite as it was (compare the hashes of a
/// suite run before the change with one after).
fn log_trace_hashes(run: &Run) {
    use std::io::Write;
    let Some(path) = std::env::var_os("FAULTLINE_HASH_LOG") else {
        return;
    };
    let mut text = format!("$ {}\n", run.description);
    for line in run.stderr.lines().filter(|l| l.contains("trace-hash=")) {
        text.push_str(line);
        text.push('\n');
    }
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = appended {
        panic!("cannot append to $FAULTLINE_HASH_LOG {path:?}: {e}");
    }
}

/// What one faultline run produced.
#[derive(Clone, Debug)]
pub struct Run {
    /// The command line, for messages.
    pub description: String,
    /// faultline's stdout: the program's stdout, byte for byte.
    pub stdout: Vec<u8>,
    /// faultline's stderr: the program's stderr plus `faultline: ` lines.
    pub stderr: String,
    /// faultline's exit status.
    pub status: ExitStatus,
    /// Wall-clock duration of the run.
    pub wall: Duration,
}

impl Run {
    /// faultline's exit code.
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .expect("Exec::run rejects runs killed by a signal")
    }

    /// stdout as UTF-8 (panics with context if it is not).
    #[track_caller]
    pub fn out(&self) -> &str {
        std::str::from_utf8(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not UTF-8 ({e})\n{self}"))
    }

    /// faultline's own stderr lines (those starting with `faultline: `).
    pub fn faultline_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with(LINE_PREFIX))
            .collect()
    }

    /// The program's stderr lines (all others).
    pub fn program_stderr_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.starts_with(LINE_PREFIX))
            .collect()
    }

    /// The first faultline line containing `needle`, if any.
    pub fn faultline_line_with(&self, needle: &str) -> Option<&str> {
        self.faultline_lines()
            .into_iter()
            .find(|l| l.contains(needle))
    }

    /// The parsed summary line; panics with context unless there is exactly
    /// one well-formed `faultline: summary` line.
    #[track_caller]
    pub fn summary(&self) -> Summary {
        Summary::from_stderr(&self.stderr).unwrap_or_else(|e| panic!("{e}\n{self}"))
    }

    /// Asserts faultline exited with `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code(), code, "unexpected exit code\n{self}");
        self
    }

    /// Asserts the program ran to exit code 0 and the summary says so.
    #[track_caller]
    pub fn expect_success(&self) -> &Self {
        self.expect_code(0);
        assert_eq!(
            self.summary().exit,
            0,
            "summary disagrees with the exit code\n{self}"
        );
        self
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "--- run: {}", self.description)?;
        writeln!(f, "--- status: {} after {:.3?}", self.status, self.wall)?;
        writeln!(
            f,
            "--- stdout:\n{}",
            tail(&String::from_utf8_lossy(&self.stdout), 4000)
        )?;
        write!(f, "--- stderr:\n{}", tail(&self.stderr, 8000))
    }
}

/// Reads `reader` to the end on a thread; the bytes arrive on the receiver.
pub fn drain<R: Read + Send + 'static>(mut reader: R) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = reader.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// The drained bytes, or `None` if the pipe is still open after `grace`.
pub fn collect(rx: &Receiver<Vec<u8>>, grace: Duration) -> Option<Vec<u8>> {
    rx.recv_timeout(grace).ok()
}

/// Waits for `child` until `deadline`; `None` if it is still running then.
pub fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        if let Some(status) = child.try_wait().expect("wait for faultline") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// SIGKILLs the process group led by `child` (spawned with `process_group(0)`).
pub fn kill_group(child: &Child) {
    let pgid = libc::pid_t::try_from(child.id()).expect("pid fits pid_t");
    // SAFETY: plain syscall on a process group this crate created.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

fn spawn_or_explain(command: &mut Command) -> Child {
    command.spawn().unwrap_or_else(|e| {
        panic!(
            "cannot start {} ({e}); build it with `cargo build --release -p faultline` or set FAULTLINE_BIN",
            faultline_bin().display()
        )
    })
}

fn describe(command: &Command) -> String {
    let mut words = vec![command.get_program().to_string_lossy().into_owned()];
    words.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}

/// The last `max` bytes of `text` (on a char boundary), marked if cut.
pub fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[... {start} bytes cut ...]{}", &text[start..])
}
