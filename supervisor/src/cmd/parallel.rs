//! `faultline run -j N`: seeds in parallel, each in its own faultline process
//! (one supervisor per process: a supervisor reaps with waitpid(-1), so two
//! cannot share one). Each seed's report is printed whole, in seed order.
//! Workers die with this process (PR_SET_PDEATHSIG), and SIGINT/SIGTERM is
//! passed on to them, so each writes its partial report.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use crate::cmd::cli::RunArgs;
use crate::cmd::seed::{seed_dir, SeedJob};
use crate::host::interrupt;
use crate::path_error::PathError;
use crate::report::artifacts::read_report;
use crate::report::summary::SeedResult;
use crate::sim::seeds::SeedTextError;

/// Why the workers could not run the seeds (faultline's failure, exit 125).
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// This process's own binary cannot be found to start workers from.
    #[error("cannot find the faultline binary: {0}")]
    Exe(std::io::Error),
    /// The settings cannot be encoded for the workers.
    #[error("{0}")]
    Settings(serde_json::Error),
    /// A worker cannot be started.
    #[error("cannot start a faultline worker: {0}")]
    Spawn(std::io::Error),
    /// A worker cannot be waited for.
    #[error("{0}")]
    Wait(std::io::Error),
    /// A worker ended without leaving its seed's report.
    #[error("seed 0x{seed:016x}: the worker ended with {status} and no report ({why}): {stderr}")]
    NoReport {
        /// The worker's seed.
        seed: u64,
        /// How the worker ended.
        status: ExitStatus,
        /// Why there is no report to read.
        why: MissingReport,
        /// What the worker printed, trimmed.
        stderr: String,
    },
}

/// Why a finished worker's seed has no report to read.
#[derive(Debug, thiserror::Error)]
pub enum MissingReport {
    /// It exited 2: whatever report.json is there is an older run's.
    #[error("it refused its input")]
    Refused,
    /// report.json is missing or unreadable.
    #[error(transparent)]
    File(#[from] PathError),
    /// report.json's seed or trace hash does not parse.
    #[error(transparent)]
    Value(#[from] SeedTextError),
}

/// A running worker: its seed's index and seed, its CPU slot, the
/// process, its stderr.
struct Worker {
    index: usize,
    seed: u64,
    slot: usize,
    child: Child,
    stderr: Receiver<Vec<u8>>,
}

fn spawn(
    args: &RunArgs,
    job: &SeedJob,
    index: usize,
    seed: u64,
    slot: usize,
) -> Result<Worker, WorkerError> {
    let exe = std::env::current_exe().map_err(WorkerError::Exe)?;
    let settings = serde_json::to_string(job.sim).map_err(WorkerError::Settings)?;
    let parent = std::process::id() as libc::pid_t;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg(&job.file)
        .arg("--seed-worker")
        .arg("--seed")
        .arg(format!("0x{seed:016x}"))
        .arg("--artifacts")
        .arg(&args.artifacts)
        .arg("--seed-timeout")
        .arg(format!(
            "{}ns",
            job.seed_timeout.map_or(0, |t| t.as_nanos())
        ))
        .arg("--worker-settings")
        .arg(settings)
        .arg("--worker-cpu")
        .arg(slot.to_string())
        .arg("--jobs")
        .arg(args.jobs.to_string());
    if args.check_determinism {
        command.arg("--check-determinism");
    }
    if args.no_recheck {
        command.arg("--no-recheck");
    }
    // Each worker appends its seed's line (with its own wall time).
    if let Some(results) = &args.results {
        command.arg("--results").arg(results);
    }
    if let Some(schedule) = &args.schedule {
        command.arg("--schedule").arg(schedule);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: prctl and getppid are async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            crate::host::spawner::die_with_parent(Some(parent));
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(WorkerError::Spawn)?;
    let mut pipe = child.stderr.take().expect("piped stderr");
    let (tx, stderr) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    Ok(Worker {
        index,
        seed,
        slot,
        child,
        stderr,
    })
}

/// Runs the seeds with at most `args.jobs` at a time; stops starting new
/// ones after a failure unless --keep-going, and after SIGINT/SIGTERM.
pub fn run_seeds(
    args: &RunArgs,
    job: &SeedJob,
    seeds: &[u64],
) -> Result<Vec<SeedResult>, WorkerError> {
    let mut queue = seeds.iter().copied().enumerate();
    let mut running: Vec<Worker> = Vec::new();
    let mut done: BTreeMap<usize, (SeedResult, Vec<u8>)> = BTreeMap::new();
    let mut printed = 0;
    let mut failed = false;
    let mut forwarded = false;
    loop {
        let stopping = interrupt::received();
        if let (Some(sig), false) = (stopping, forwarded) {
            for w in &running {
                unsafe { libc::kill(w.child.id() as libc::pid_t, sig) };
            }
            forwarded = true;
        }
        while stopping.is_none() && (args.keep_going || !failed) && running.len() < args.jobs {
            let Some((i, seed)) = queue.next() else { break };
            let slot = lowest_free_slot(running.iter().map(|w| w.slot));
            running.push(spawn(args, job, i, seed, slot)?);
        }
        if running.is_empty() {
            break;
        }
        let finished = running
            .iter_mut()
            .position(|w| matches!(w.child.try_wait(), Ok(Some(_))));
        let Some(k) = finished else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let mut w = running.remove(k);
        let status = w.child.wait().map_err(WorkerError::Wait)?;
        let stderr = w.stderr.recv().unwrap_or_default();
        let result = match status.code() {
            Some(2) => Err(MissingReport::Refused),
            _ => worker_result(args, job, w.seed),
        };
        let result = result.map_err(|why| WorkerError::NoReport {
            seed: w.seed,
            status,
            why,
            stderr: String::from_utf8_lossy(&stderr).trim().to_string(),
        })?;
        failed |= !result.pass;
        done.insert(w.index, (result, stderr));
        // Print finished seeds in order.
        while let Some((_, stderr)) = done.get(&printed) {
            eprint!("{}", String::from_utf8_lossy(stderr));
            printed += 1;
        }
    }
    for (_, stderr) in done.range(printed..) {
        eprint!("{}", String::from_utf8_lossy(&stderr.1));
    }
    Ok(done.into_values().map(|(r, _)| r).collect())
}

/// The lowest CPU slot none of the running workers (`taken`) has: a
/// worker that ends leaves its CPU to the next one.
fn lowest_free_slot(taken: impl Iterator<Item = usize> + Clone) -> usize {
    (0..)
        .find(|s| taken.clone().all(|t| t != *s))
        .expect("fewer workers than slots")
}

/// The result a worker recorded in its seed's report.json.
fn worker_result(args: &RunArgs, job: &SeedJob, seed: u64) -> Result<SeedResult, MissingReport> {
    let report = read_report(&seed_dir(args, job.sc, seed))?;
    Ok(SeedResult::from_report(&report)?)
}

#[cfg(test)]
mod tests {
    use super::lowest_free_slot;

    #[test]
    fn a_new_worker_takes_the_lowest_slot_left_free() {
        assert_eq!(lowest_free_slot([].into_iter()), 0);
        assert_eq!(lowest_free_slot([0, 1].into_iter()), 2);
        assert_eq!(lowest_free_slot([1, 0, 3].into_iter()), 2);
        assert_eq!(lowest_free_slot([1].into_iter()), 0);
    }
}
