//! `faultline exec`: run one program, print the summary, optionally run it a
//! second time and compare the traces event by event.

use std::fs::File;
use std::time::Duration;

use crate::cli::ExecArgs;
use crate::launch::LaunchSpec;
use crate::supervisor::{Config, Ending, Outcome, Supervisor};
use crate::trace::TraceLog;
use crate::{duration, seccomp, syscalls, vclock};

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

fn config(args: &ExecArgs) -> Result<Config, String> {
    Ok(Config {
        seed: args.seed,
        epoch_secs: vclock::parse_epoch(&args.epoch)?,
        cpus: args.cpus,
        step_cost_ns: duration::parse_ns(&args.step_cost)?,
        spin_limit: Duration::from_nanos(duration::parse_ns(&args.spin_limit)?.max(1_000_000)),
        idle_limit: Duration::from_secs(10),
        hostname: args.hostname.clone(),
        pin_cpu: !args.no_pin,
        signals_at: args.signal_at.clone(),
        until_ns: args
            .timeout
            .as_deref()
            .map(duration::parse_ns)
            .transpose()?,
    })
}

fn try_run(args: &ExecArgs) -> Result<i32, String> {
    let cfg = config(args)?;
    let spec = LaunchSpec {
        program: args.command[0].clone(),
        args: args.command[1..].to_vec(),
        env: std::env::vars().collect(),
        filter: seccomp::build_filter(&syscalls::trapped_numbers()),
        output: None,
    };
    let trace_file = match &args.trace {
        Some(p) => {
            Some(File::create(p).map_err(|e| format!("cannot write trace {}: {e}", p.display()))?)
        }
        None => None,
    };
    let first = run_once(
        &cfg,
        &spec,
        TraceLog::new(trace_file, args.check_determinism),
    )?;
    print_outcome(&cfg, &first);
    let code = exit_code(&first.ending);
    if !args.check_determinism {
        return Ok(code);
    }
    let devnull = File::options()
        .write(true)
        .open("/dev/null")
        .map_err(|e| e.to_string())?;
    use std::os::fd::AsRawFd;
    let quiet = LaunchSpec {
        output: Some((devnull.as_raw_fd(), devnull.as_raw_fd())),
        ..spec
    };
    let second = run_once(&cfg, &quiet, TraceLog::new(None, true))?;
    match first_divergence(&first.lines, &second.lines) {
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
            if let Some((n, a, b)) = divergence {
                eprintln!("faultline: first divergent event #{n}:");
                eprintln!("faultline:   run 1: {a}");
                eprintln!("faultline:   run 2: {b}");
            }
            Ok(EXIT_NONDETERMINISTIC)
        }
    }
}

fn run_once(cfg: &Config, spec: &LaunchSpec, trace: TraceLog) -> Result<Outcome, String> {
    let sup = Supervisor::start(cfg.clone(), spec, trace).map_err(|e| e.to_string())?;
    Ok(sup.run())
}

/// The first event number at which two traces differ, with both lines.
fn first_divergence(a: &[String], b: &[String]) -> Option<(usize, String, String)> {
    let missing = || "(run ended)".to_string();
    (0..a.len().max(b.len())).find_map(|i| {
        let (x, y) = (a.get(i), b.get(i));
        (x != y).then(|| {
            (
                i + 1,
                x.cloned().unwrap_or_else(missing),
                y.cloned().unwrap_or_else(missing),
            )
        })
    })
}

fn exit_code(ending: &Ending) -> i32 {
    match ending {
        Ending::Exited(c) => *c,
        Ending::Signaled(s) => 128 + s,
        Ending::Deadlock(_) | Ending::TimeLimit => EXIT_DEADLOCK,
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
        Ending::TimeLimit => eprintln!(
            "faultline: virtual time limit reached at {:.6}s; the program was still running",
            o.vtime as f64 / 1e9
        ),
        _ => {}
    }
    if o.preemptions > 0 {
        eprintln!(
            "faultline: warning: the watchdog preempted a thread {} time(s) (a spin without syscalls, or input from outside); this run is possibly non-deterministic",
            o.preemptions
        );
    }
    eprintln!(
        "faultline: summary seed=0x{:016x} exit={} vtime={:.6}s events={} stops={} trace-hash=0x{:016x}",
        cfg.seed,
        exit_code(&o.ending),
        o.vtime as f64 / 1e9,
        o.events,
        o.stops,
        o.hash
    );
}
