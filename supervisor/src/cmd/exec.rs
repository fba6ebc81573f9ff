//! `faultline exec`: run one program, print the summary, optionally run it a
//! second time and compare the traces event by event.

use std::fs::File;
use std::io::Write;
use std::time::Duration;

use crate::cmd::cli::{ExecArgs, SimArgs};
use crate::engine::{Config, Ending, Outcome, Supervisor};
use crate::host::launch::LaunchSpec;
use crate::host::seccomp;
use crate::report::divergence::first_divergence;
use crate::scenario::duration;
use crate::sim::netstate::NetState;
use crate::sim::trace::TraceLog;
use crate::sim::vclock;
use crate::sys::table as syscalls;

/// Exit code when --check-determinism finds the runs differ.
pub const EXIT_NONDETERMINISTIC: i32 = 123;
/// Exit code for a deadlock or an exhausted --timeout.
pub const EXIT_DEADLOCK: i32 = 124;
/// Exit code when faultline itself could not run the program.
pub const EXIT_FAULTLINE_ERROR: i32 = 125;

/// Runs the verb; returns the process exit code.
pub fn run(args: &ExecArgs) -> i32 {
    match try_run(args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("faultline: error: {msg}");
            EXIT_FAULTLINE_ERROR
        }
    }
}

/// The run settings from the shared simulation flags, for one seed.
pub fn config(sim: &SimArgs, seed: u64) -> Result<Config, String> {
    Ok(Config {
        seed,
        epoch_secs: vclock::parse_epoch(&sim.epoch)?,
        cpus: sim.cpus,
        step_cost_ns: duration::parse_ns(&sim.step_cost)?,
        spin_limit: Duration::from_nanos(duration::parse_ns(&sim.spin_limit)?.max(1_000_000)),
        idle_limit: Duration::from_secs(10),
        pin_cpu: !sim.no_pin,
        signals_at: Vec::new(),
        until_ns: None,
        vdso: !sim.no_vdso,
        go_yields: sim.go_yields,
        preload: sim.preload,
        clock_step_every: sim.clock_step_every,
        schedule: sim.schedule(),
        wall_deadline: None,
    })
}

fn try_run(args: &ExecArgs) -> Result<i32, String> {
    let mut cfg = config(&args.sim, args.seed)?;
    cfg.signals_at = args.signal_at.clone();
    cfg.until_ns = args
        .timeout
        .as_deref()
        .map(duration::parse_ns)
        .transpose()?;
    let spec = LaunchSpec {
        program: args.command[0].clone(),
        args: args.command[1..].to_vec(),
        env: std::env::vars().collect(),
        filter: seccomp::build_filter(&syscalls::trapped_numbers()),
        output: None,
        mounts: Vec::new(),
        channel_fd: None,
        cwd: None,
    };
    let trace_file = match &args.trace {
        Some(p) => {
            Some(File::create(p).map_err(|e| format!("cannot write trace {}: {e}", p.display()))?)
        }
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
    std::io::stdout()
        .write_all(&out)
        .map_err(|e| e.to_string())?;
    std::io::stderr()
        .write_all(&errout)
        .map_err(|e| e.to_string())?;
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
    run: impl FnOnce(&LaunchSpec) -> Result<Outcome, String>,
) -> Result<(Outcome, Vec<u8>, Vec<u8>), String> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let pipe = || -> Result<(File, OwnedFd), String> {
        let mut fds = [0i32; 2];
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error().to_string());
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
) -> Result<Outcome, String> {
    let work = std::env::temp_dir().join(format!("faultline-exec-{}", std::process::id()));
    let net = NetState::new(
        cfg.seed,
        vnet::NetConfig::default(),
        &[host.to_string()],
        &work,
    )
    .map_err(|e| e.to_string())?;
    let mut sup = Supervisor::new(cfg.clone(), trace, net, Vec::new());
    let launched = sup.launch(spec, host);
    let outcome = match launched {
        Ok(()) => Ok(sup.run()),
        Err(e) => Err(e.to_string()),
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
            crate::cmd::verdict::host_state_words(&o.host_state)
        );
    }
    if o.preemptions > 0 {
        eprintln!(
            "faultline: warning: the watchdog preempted a thread {} time(s) (a spin without syscalls, or input from outside); this run is possibly non-deterministic",
            o.preemptions
        );
    }
    eprintln!(
        "faultline: summary seed=0x{:016x} exit={} vtime={:.6}s events={} stops={} fast={} trace-hash=0x{:016x}",
        cfg.seed,
        exit_code(&o.ending),
        o.vtime as f64 / 1e9,
        o.events,
        o.stops,
        o.fast_calls,
        o.hash
    );
}
