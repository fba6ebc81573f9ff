//! `faultline run`: a scenario's nodes on one simulated network, for each of
//! its seeds, with a verdict per seed and each node's output kept under the
//! artifacts directory.

use std::path::PathBuf;

use crate::cmd::cli::{RunArgs, SimArgs};
use crate::cmd::parallel::WorkerError;
use crate::cmd::results::ResultsError;
use crate::cmd::seed::{run_seed, seed_dir, SeedError, SeedJob};
use crate::cmd::seeds::SeedsError;
use crate::cmd::settings::{config, SettingsError};
use crate::cmd::verdict;
use crate::engine::signal_name;
use crate::host::interrupt;
use crate::path_error::PathError;
use crate::report::artifacts::{self, Verdict};
use crate::report::summary::{SeedResult, Summary};
use crate::scenario::schedule_file::{Schedule, ScheduleError};
use crate::scenario::{self, Scenario, ScenarioError};

/// Exit code: every seed passed.
const EXIT_PASS: i32 = 0;
/// Exit code: a seed failed (or was stuck).
const EXIT_FAIL: i32 = 1;
/// Exit code: the scenario or the command line is wrong (as `exec`'s).
const EXIT_BAD_INPUT: i32 = crate::cmd::exec::EXIT_BAD_INPUT;
/// Exit code: faultline itself failed (as `exec`'s).
const EXIT_FAULTLINE_ERROR: i32 = crate::cmd::exec::EXIT_FAULTLINE_ERROR;
/// Exit code: `--check-determinism` found a seed whose two runs differ (as
/// `exec --check-determinism`'s).
const EXIT_NONDETERMINISTIC: i32 = crate::cmd::exec::EXIT_NONDETERMINISTIC;

/// Why `run` could not do its job: bad input (exit 2) or faultline's own
/// failure (exit 125).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// `--worker-settings` is not what a parent writes (bad input).
    #[error("--worker-settings: {0}")]
    WorkerSettings(serde_json::Error),
    /// A simulation flag does not parse (bad input).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The scenario file cannot be read (bad input).
    #[error("{path}:0:0: cannot read: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The scenario is invalid (bad input).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The seed flags select no seeds (bad input).
    #[error(transparent)]
    Seeds(#[from] SeedsError),
    /// The `--results` file cannot be written (bad input: checked first).
    #[error(transparent)]
    ResultsFile(ResultsError),
    /// The `--schedule` file is unusable (bad input).
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The job cannot be prepared: the scenario file or a node's program
    /// cannot be read (bad input).
    #[error(transparent)]
    Job(SeedError),
    /// A seed could not be run or reported (faultline's failure).
    #[error(transparent)]
    Seed(#[from] SeedError),
    /// The `-j` workers failed (faultline's failure).
    #[error(transparent)]
    Workers(#[from] WorkerError),
    /// A seed's `--results` line cannot be written (faultline's failure).
    #[error(transparent)]
    ResultLine(ResultsError),
    /// summary.json or the JUnit file cannot be written (faultline's failure).
    #[error(transparent)]
    File(#[from] PathError),
    /// summary.json cannot be encoded (faultline's failure).
    #[error("{0}")]
    Summary(serde_json::Error),
}

impl RunError {
    fn code(&self) -> i32 {
        match self {
            RunError::WorkerSettings(_)
            | RunError::Settings(_)
            | RunError::Unreadable { .. }
            | RunError::Scenario(_)
            | RunError::Seeds(_)
            | RunError::ResultsFile(_)
            | RunError::Schedule(_)
            | RunError::Job(_) => EXIT_BAD_INPUT,
            RunError::Seed(_)
            | RunError::Workers(_)
            | RunError::ResultLine(_)
            | RunError::File(_)
            | RunError::Summary(_) => EXIT_FAULTLINE_ERROR,
        }
    }
}

/// Runs the verb; returns the process exit code.
pub fn run(args: &RunArgs) -> i32 {
    match try_run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            e.code()
        }
    }
}

/// The settings: the flags, or what the parent of a worker handed down.
fn settings(args: &RunArgs) -> Result<SimArgs, RunError> {
    let sim = match &args.worker_settings {
        Some(json) => serde_json::from_str(json).map_err(RunError::WorkerSettings)?,
        None => args.sim.clone(),
    };
    config(&sim, 0)?;
    Ok(sim)
}

fn try_run(args: &RunArgs) -> Result<i32, RunError> {
    let mut sim = settings(args)?;
    let text = std::fs::read_to_string(&args.file).map_err(|source| RunError::Unreadable {
        path: args.file.clone(),
        source,
    })?;
    let sc = scenario::parse(&args.file, &text)?;
    let seeds = crate::cmd::seeds::select(&sc, args)?;
    if seeds.len() > 1 && sim.progress == crate::cmd::settings::PROGRESS_AUTO {
        // The seeds' own progress bar (or their -j workers' reports) is
        // the progress of a run of many.
        sim.progress = "0".into();
    }
    let shard = crate::cmd::seeds::shard(args)?;
    if let Some(path) = &args.results {
        crate::cmd::results::check_writable(path).map_err(RunError::ResultsFile)?;
    }
    let mut job =
        SeedJob::new(&sc, &args.file, text, &sim, args.seed_timeout).map_err(RunError::Job)?;
    if let Some(path) = &args.schedule {
        job = job.with_schedule(Schedule::read(path, &sc)?);
    }
    job.recheck = args.recheck();
    job.cpu_slot = args
        .worker_cpu
        .map(|index| crate::host::placement::CpuSlot {
            index,
            workers: args.jobs,
        });
    interrupt::install();
    let out_dir = args.artifacts.join(&sc.name);
    if !args.seed_worker {
        eprint!(
            "{}",
            verdict::start_line(&args.file, &sc.name, seeds.len(), args.jobs, &out_dir)
        );
    }
    let results = if args.jobs > 1 && seeds.len() > 1 {
        crate::cmd::parallel::run_seeds(args, &job, &seeds)?
    } else {
        run_in_process(&job, args, &seeds)?
    };
    let signal = interrupt::received();
    let code = exit_code(&results, signal);
    if args.seed_worker {
        return Ok(code);
    }
    write_summary(args, &sc, shard, &results)?;
    let not_run: Vec<u64> = seeds
        .iter()
        .copied()
        .filter(|s| !results.iter().any(|r| r.seed == *s))
        .collect();
    if let Some(path) = &args.junit {
        let xml = crate::report::junit::document(&sc.name, &results, &not_run);
        std::fs::write(path, xml).map_err(PathError::io(path))?;
    }
    eprint!(
        "{}",
        verdict::end_text(&sc.name, &results, not_run.len(), signal.is_some())
    );
    if let Some(sig) = signal {
        eprintln!(
            "faultline: interrupted by {}: {} seed(s) not run; artifacts kept in {}/",
            signal_name(sig),
            not_run.len(),
            out_dir.display()
        );
    }
    Ok(code)
}

/// 128+N after signal N; 125 if faultline failed; 123 if a seed's two
/// runs differed (its failures cannot be trusted); 1 if a seed failed or
/// was stuck; else 0.
fn exit_code(results: &[SeedResult], signal: Option<i32>) -> i32 {
    if let Some(sig) = signal {
        return 128 + sig;
    }
    let verdicts: Vec<Verdict> = results.iter().map(SeedResult::verdict).collect();
    if verdicts.contains(&Verdict::Error) {
        EXIT_FAULTLINE_ERROR
    } else if verdicts.contains(&Verdict::Nondeterministic) {
        EXIT_NONDETERMINISTIC
    } else if verdicts.iter().any(|v| *v != Verdict::Pass) {
        EXIT_FAIL
    } else {
        EXIT_PASS
    }
}

/// Runs the seeds one after another in this process, with a progress bar
/// when stderr is a terminal and plain lines otherwise.
fn run_in_process(
    job: &SeedJob,
    args: &RunArgs,
    seeds: &[u64],
) -> Result<Vec<SeedResult>, RunError> {
    use std::io::IsTerminal;
    let bar = (std::io::stderr().is_terminal() && seeds.len() > 1).then(|| {
        let bar = indicatif::ProgressBar::new(seeds.len() as u64);
        let style = indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} seeds  {elapsed_precise}  {msg}",
        )
        .expect("valid progress template");
        bar.set_style(style);
        bar
    });
    let say = |line: &str| match &bar {
        Some(b) => b.println(line.trim_end()),
        None => eprint!("{line}"),
    };
    let mut results = Vec::new();
    let mut failures = 0;
    for &seed in seeds {
        if interrupt::received().is_some() {
            break;
        }
        if let Some(note) = job.sc.pinned.iter().find(|p| p.0 == seed).map(|p| &p.1) {
            say(&verdict::pinned_line(seed, note));
        }
        let dir = seed_dir(args, job.sc, seed);
        let started = std::time::Instant::now();
        let r = run_seed(job, seed, &dir)?;
        if let Some(path) = &args.results {
            crate::cmd::results::append(path, &dir, started.elapsed())
                .map_err(RunError::ResultLine)?;
        }
        say(&r.text);
        failures += usize::from(!r.pass);
        if let Some(b) = &bar {
            b.inc(1);
            b.set_message(format!("{failures} failed"));
        }
        let stop = match r.verdict() {
            Verdict::Pass => false,
            Verdict::Fail | Verdict::Stuck | Verdict::Nondeterministic => !args.keep_going,
            Verdict::Interrupted | Verdict::Error => true,
        };
        results.push(r);
        if stop {
            break;
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(results)
}

/// Writes `<artifacts>/<scenario>/summary[-shard-I-of-N].json`.
fn write_summary(
    args: &RunArgs,
    sc: &Scenario,
    shard: Option<(u64, u64)>,
    results: &[SeedResult],
) -> Result<(), RunError> {
    let dir = args.artifacts.join(&sc.name);
    std::fs::create_dir_all(&dir).map_err(PathError::io(&dir))?;
    let name = match shard {
        Some((i, n)) => format!("summary-shard-{i}-of-{n}.json"),
        None => "summary.json".to_string(),
    };
    let summary = Summary {
        format: artifacts::FORMAT,
        scenario: sc.name.clone(),
        seeds: results.to_vec(),
    };
    let text = serde_json::to_string_pretty(&summary).map_err(RunError::Summary)?;
    let path = dir.join(name);
    std::fs::write(&path, text + "\n").map_err(PathError::io(&path))?;
    Ok(())
}
