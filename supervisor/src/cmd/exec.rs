//! `faultline exec`: run one program, print the summary, optionally run it a
//! second time and compare the traces event by event.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::cmd::cli::ExecArgs;
use crate::cmd::settings::{config, SettingsError};
use crate::engine::{Config, Ending, Outcome, Supervisor};
use crate::host::launch::{LaunchError, LaunchSpec};
use crate::report::divergence::first_divergence;
use crate::scenario::duration::{self, DurationError};
use crate::sim::netstate::{NetSetupError, NetState};
use crate::sim::trace::TraceLog;
use crate::sys::table as syscalls;

/// Exit code when --check-determinism finds the runs differ.
pub const EXIT_NONDETERMINISTIC: i32 = 123;
/// Exit code for a deadlock or an exhausted --timeout.
pub const EXIT_DEADLOCK: i32 = 124;
/// Exit code when faultline itself could not run the program.
pub const EXIT_FAULTLINE_ERROR: i32 = 125;
/// Exit code for a bad flag or argument, as clap's own refusals.
pub const EXIT_BAD_INPUT: i32 = 2;

/// Runs the verb; returns the process exit code.
pub fn run(args: &ExecArgs) -> i32 {
    match try_run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            e.code()
        }
    }
}

/// Why `exec` could not run the program: a flag's bad value (exit 2, as
/// clap's own refusals), else faultline's failure (exit 125).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A simulation flag does not parse.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// `--timeout` is not a duration.
    #[error("--timeout: {0}")]
    Timeout(#[source] DurationError),
    /// The `--trace` file cannot be created.
    #[error("cannot write trace {path}: {source}")]
    Trace {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A pipe for the program's output, or writing that output on.
    #[error(transparent)]
    Output(#[from] io::Error),
    /// The one-host network.
    #[error(transparent)]
    Net(#[from] NetSetupError),
    /// The program could not be started.
    #[error(transparent)]
    Launch(#[from] LaunchError),
}

impl ExecError {
    fn code(&self) -> i32 {
        match self {
            ExecError::Settings(_) | ExecError::Timeout(_) => EXIT_BAD_INPUT,
            ExecError::Trace { .. }
            | ExecError::Output(_)
            | ExecError::Net(_)
            | ExecError::Launch(_) => EXIT_FAULTLINE_ERROR,
        }
    }
}

fn try_run(args: &ExecArgs) -> Result<i32, ExecError> {
    let mut cfg = config(&args.sim, args.seed)?;
    cfg.signals_at = args.signal_at.clone();
    cfg.until_ns = args
        .timeout
        .as_deref()
        .map(duration::parse_ns)
        .transpose()
        .map_err(ExecError::Timeout)?;
    let spec = LaunchSpec {
        program: args.command[0].clone(),
        args: args.command[1..].to_vec(),
        env: std::env::vars().collect(),
        filter: syscalls::seccomp_filter(None),
        output: None,
        mounts: Vec::new(),
        channel_fd: None,
        notify_filter: None,
        cwd: None,
    };
    let trace_file = match &args.trace {
        Some(p) => Some(File::create(p).map_err(|source| ExecError::Trace {
            path: p.clone(),
            source,
        })?),
        None => None,
    };
    if !args.check_determinism {
        let first = run_once(&cfg, &spec, &args.host, TraceLog::new(trace_file, false))?;
        print_outcome(&cfg, &first);
        return Ok(exit_code(&first.ending));
    }
    // Both runs write into pipes, so the program sees the same kind of
    // stdout each time; the first run's output is replayed afterwards.
    let (first, out, errout) = captured(&spec, |spec| {
        run_once(&cfg, spec, &args.host, TraceLog::new(trace_file, true))
    })?;
    io::stdout().write_all(&out)?;
    io::stderr().write_all(&errout)?;
    print_outcome(&cfg, &first);
    let code = exit_code(&first.ending);
    let (second, _, _) = captured(&spec, |spec| {
        run_once(&cfg, spec, &args.host, TraceLog::new(None, true))
    })?;
    let divergence = first_divergence(first.lines.iter().cloned(), second.lines.iter().cloned());
    match divergence {
        None if first.hash == second.hash => {
            eprintln!(
                "faultline: determinism ok: two runs of seed 0x{:016x} gave {} identical events, trace-hash=0x{:016x}",
                cfg.seed, first.events, first.hash
            );
            Ok(code)
        }
        divergence => {
            eprintln!(
                "faultline: determinism FAILED: seed 0x{:016x} gave trace-hash 0x{:016x} then 0x{:016x}",
                cfg.seed, first.hash, second.hash
            );
            if let Some(d) = divergence {
                d.print("run 1", "run 2");
            }
            Ok(EXIT_NONDETERMINISTIC)
        }
    }
}

/// One run of `spec` on a one-host network named `host`.
/// Runs `run` with the program's stdout and stderr going into pipes that
/// are drained concurrently; returns the outcome and the captured bytes.
fn captured(
    spec: &LaunchSpec,
    run: impl FnOnce(&LaunchSpec) -> Result<Outcome, ExecError>,
) -> Result<(Outcome, Vec<u8>, Vec<u8>), ExecError> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let pipe = || -> io::Result<(File, OwnedFd)> {
        let mut fds = [0i32; 2];
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just gave us both descriptors.
        Ok(unsafe { (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
    };
    let drain = |mut r: File| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = std::io::Read::read_to_end(&mut r, &mut buf);
            buf
        })
    };
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (out_t, err_t) = (drain(out_r), drain(err_r));
    let spec = LaunchSpec {
        output: Some((out_w.as_raw_fd(), err_w.as_raw_fd())),
        ..spec.clone()
    };
    let outcome = run(&spec);
    drop((out_w, err_w));
    let out = out_t.join().unwrap_or_default();
    let errout = err_t.join().unwrap_or_default();
    Ok((outcome?, out, errout))
}

fn run_once(
    cfg: &Config,
    spec: &LaunchSpec,
    host: &str,
    trace: TraceLog,
) -> Result<Outcome, ExecError> {
    let work = std::env::temp_dir().join(format!("faultline-exec-{}", std::process::id()));
    let net = NetState::new(
        cfg.seed,
        vnet::NetConfig::default(),
        &[host.to_string()],
        &work,
    )?;
    let mut sup = Supervisor::new(cfg.clone(), trace, net, Vec::new());
    let launched = sup.launch(spec, host);
    let outcome = match launched {
        Ok(()) => Ok(sup.run()),
        Err(e) => Err(e.into()),
    };
    let _ = std::fs::remove_dir_all(&work);
    outcome
}

fn exit_code(ending: &Ending) -> i32 {
    match ending {
        Ending::Exited(c) => *c,
        Ending::Signaled(s) => 128 + s,
        Ending::Deadlock(_) | Ending::TimeLimit | Ending::Invariant | Ending::Stuck => {
            EXIT_DEADLOCK
        }
        Ending::Interrupted(s) => 128 + s,
        Ending::Internal(_) => EXIT_FAULTLINE_ERROR,
    }
}

fn print_outcome(cfg: &Config, o: &Outcome) {
    match &o.ending {
        Ending::Deadlock(lines) => {
            eprintln!(
                "faultline: deadlock: no thread can run and no timer is pending (virtual time {:.6}s)",
                o.vtime as f64 / 1e9
            );
            for l in lines {
                eprintln!("faultline: deadlock:   {l}");
            }
        }
        Ending::Internal(e) => eprintln!("faultline: error: {e}"),
        Ending::TimeLimit => eprintln!(
            "faultline: virtual time limit reached at {:.6}s; the program was still running",
            o.vtime as f64 / 1e9
        ),
        _ => {}
    }
    if !o.host_state.is_empty() {
        eprintln!(
            "faultline: warning: {}; this run is possibly non-deterministic",
            crate::sys::host_state::host_state_words(&o.host_state)
        );
    }
    if o.preemptions > 0 {
        eprintln!(
            "faultline: warning: the watchdog preempted a thread {} time(s) (a spin without syscalls, or input from outside); this run is possibly non-deterministic",
            o.preemptions
        );
    }
    eprintln!(
        "faultline: summary seed=0x{:016x} exit={} vtime={:.6}s events={} stops={} fast={} in-stub={} trace-hash=0x{:016x}",
        cfg.seed,
        exit_code(&o.ending),
        o.vtime as f64 / 1e9,
        o.events,
        o.stops,
        o.fast_calls,
        o.quiet_polls_in_stub + o.empty_reads_in_stub,
        o.hash
    );
}
