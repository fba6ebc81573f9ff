//! `faultline replay DIR` and `faultline pin DIR`: what a seed's artifact
//! directory is good for after the run — running it again, identically, and
//! keeping it as a regression test in the scenario file. Replay only reads
//! DIR: the new run goes to DIR/replay-N/ (or `--artifacts`), with the
//! settings, scenario copy and binaries' hashes DIR/report.json recorded.

use std::path::{Path, PathBuf};

use crate::cmd::cli::{parse_seed, ReplayArgs, ValueError};
use crate::cmd::seed::{run_seed, SeedError, SeedJob};
use crate::path_error::PathError;
use crate::report::artifacts::{read_report, Report, Verdict, SCENARIO_COPY, TRACE};
use crate::report::divergence::first_divergence;
use crate::report::provenance;
use crate::scenario::schedule_file::{Schedule, ScheduleError};
use crate::scenario::{self, ScenarioError};
use crate::sim::trace::read_lines;

/// Exit code: the replay's trace differs from the recorded one.
const EXIT_DIVERGED: i32 = 3;

/// Why a seed's artifact directory cannot be replayed or pinned (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// report.json, the scenario file or its copy cannot be read or written.
    #[error(transparent)]
    File(#[from] PathError),
    /// report.json's seed or trace hash does not parse.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// The recorded scenario text is no longer valid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// faults.json is unusable.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The scenario file now names another scenario.
    #[error("{file} now names scenario {now:?}, not {recorded:?}")]
    Renamed {
        /// The scenario file.
        file: String,
        /// The name in it now.
        now: String,
        /// The name report.json recorded.
        recorded: String,
    },
    /// The same, for `pin`, which would write into that file.
    #[error("{file} now names scenario {now:?}, not {recorded:?}: not pinning there")]
    PinRenamed {
        /// The scenario file.
        file: String,
        /// The name in it now.
        now: String,
        /// The name report.json recorded.
        recorded: String,
    },
    /// `--artifacts` names a directory with something in it.
    #[error("--artifacts {0}: not an empty directory; replay never overwrites a run")]
    NotEmpty(PathBuf),
    /// Every replay-N name is taken.
    #[error("no free replay-N directory")]
    NoFreeDir,
    /// The replay could not be run.
    #[error(transparent)]
    Seed(#[from] SeedError),
}

/// Runs the recorded seed again into a new directory and compares.
pub fn replay(args: &ReplayArgs) -> i32 {
    match try_replay(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            2
        }
    }
}

/// The scenario text that ran: the copy in DIR (older artifacts: the file).
fn recorded_scenario(dir: &Path, file: &Path) -> Result<String, PathError> {
    let copy = dir.join(SCENARIO_COPY);
    let text = match std::fs::read_to_string(&copy) {
        Ok(text) => text,
        Err(_) => std::fs::read_to_string(file).map_err(PathError::io(file))?,
    };
    if std::fs::read_to_string(file).is_ok_and(|now| now != text) {
        eprintln!(
            "faultline: note: {} changed since the recorded run; replaying the recorded copy {}",
            file.display(),
            copy.display()
        );
    }
    Ok(text)
}

/// Where the replay goes: `--artifacts` (new or empty), else DIR/replay-N.
fn output_dir(args: &ReplayArgs) -> Result<PathBuf, ReplayError> {
    if let Some(out) = &args.artifacts {
        let same = out.canonicalize().ok() == args.dir.canonicalize().ok() && out.exists();
        let used = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some());
        if same || used {
            return Err(ReplayError::NotEmpty(out.clone()));
        }
        return Ok(out.clone());
    }
    (1..)
        .map(|n| args.dir.join(format!("replay-{n}")))
        .find(|p| !p.exists())
        .ok_or(ReplayError::NoFreeDir)
}

/// Warns about what changed since the recorded run, naming the files: the
/// expected reason a replay differs after a fix.
fn warn_changes(rec: &Report) {
    if !rec.faultline_version.is_empty() && rec.faultline_version != provenance::VERSION {
        eprintln!(
            "faultline: warning: recorded with faultline {}, replaying with {}",
            rec.faultline_version,
            provenance::VERSION
        );
    }
    for line in provenance::changed_binaries(&rec.binaries) {
        eprintln!("faultline: warning: {line}");
    }
}

/// A seed's artifact directory read back: what `replay` and `shrink` run again.
pub(crate) struct Recorded {
    /// The directory.
    pub dir: PathBuf,
    /// Its report.json.
    pub rec: Report,
    /// The seed.
    pub seed: u64,
    /// The scenario file the seed ran (absolute).
    pub file: PathBuf,
    /// The scenario text that ran (the copy in the directory).
    pub text: String,
    /// That text, validated.
    pub sc: scenario::Scenario,
}

impl Recorded {
    /// Reads DIR's report.json and scenario copy.
    pub(crate) fn read(dir: &Path) -> Result<Recorded, ReplayError> {
        let rec = read_report(dir)?;
        let seed = parse_seed(&rec.seed)?;
        let file = PathBuf::from(&rec.file);
        let text = recorded_scenario(dir, &file)?;
        let sc = scenario::parse(&file, &text)?;
        if sc.name != rec.scenario {
            return Err(ReplayError::Renamed {
                file: rec.file,
                now: sc.name,
                recorded: rec.scenario,
            });
        }
        Ok(Recorded {
            dir: dir.to_path_buf(),
            rec,
            seed,
            file,
            text,
            sc,
        })
    }

    /// The seed's fault plan as its faults.json recorded it.
    pub(crate) fn schedule(&self) -> Result<Schedule, ScheduleError> {
        Schedule::read(&self.dir.join("faults.json"), &self.sc)
    }

    /// A job that runs the seed as recorded: its settings, and its recorded
    /// schedule if it ran one.
    pub(crate) fn job(&self, seed_timeout: u64) -> Result<SeedJob<'_>, ReplayError> {
        let job = SeedJob::new(
            &self.sc,
            &self.file,
            self.text.clone(),
            &self.rec.settings,
            seed_timeout,
        )?;
        Ok(match self.rec.scheduled {
            true => job.with_schedule(self.schedule()?),
            false => job,
        })
    }
}

fn try_replay(args: &ReplayArgs) -> Result<i32, ReplayError> {
    let recorded = Recorded::read(&args.dir)?;
    let (rec, seed) = (&recorded.rec, recorded.seed);
    let out = output_dir(args)?;
    warn_changes(rec);
    let job = recorded.job(args.seed_timeout)?;
    eprintln!(
        "faultline: replaying seed {} of {:?} into {}/",
        rec.seed,
        rec.scenario,
        out.display()
    );
    crate::host::interrupt::install();
    let result = run_seed(&job, seed, &out)?;
    eprint!("{}", result.text);
    if let Some(sig) = crate::host::interrupt::received() {
        return Ok(128 + sig);
    }
    let recorded = parse_seed(&rec.trace_hash)?;
    if result.hash != recorded {
        eprintln!(
            "faultline: replay DIFFERS: trace-hash 0x{:016x}, recorded {} (was the binary, the scenario or a flag changed?)",
            result.hash, rec.trace_hash
        );
        let traces = (trace_of(&args.dir), read_lines(&out.join(TRACE)));
        match traces {
            (Ok(old), Ok(new)) => {
                if let Some(d) = first_divergence(old, new) {
                    d.print("recorded", "replay  ");
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("faultline: cannot compare the traces event by event: {e}")
            }
        }
        return Ok(EXIT_DIVERGED);
    }
    let what = match &rec.failure {
        Some(f) => format!(
            "the same check {:?} fails at t={:.9}s ({} {})",
            f.check,
            f.t_ns as f64 / 1e9,
            f.unit,
            f.event
        ),
        None => "the seed passes again".to_string(),
    };
    eprintln!(
        "faultline: replay identical: trace-hash {} matches; {what}",
        rec.trace_hash
    );
    Ok(match result.verdict() {
        Verdict::Pass => 0,
        Verdict::Error => crate::cmd::exec::EXIT_FAULTLINE_ERROR,
        _ => 1,
    })
}

/// A recorded seed's trace lines (trace.jsonl.zst, or an older trace.jsonl).
fn trace_of(dir: &Path) -> std::io::Result<Vec<String>> {
    read_lines(&dir.join(TRACE)).or_else(|_| read_lines(&dir.join("trace.jsonl")))
}

/// Adds the recorded seed to the scenario file's [[pinned]] list.
pub fn pin(dir: &Path) -> i32 {
    match try_pin(dir) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            2
        }
    }
}

fn try_pin(dir: &Path) -> Result<(), ReplayError> {
    let rec = read_report(dir)?;
    let seed = parse_seed(&rec.seed)?;
    let file = Path::new(&rec.file);
    let sc = scenario::load(file)?;
    if sc.name != rec.scenario {
        return Err(ReplayError::PinRenamed {
            file: rec.file,
            now: sc.name,
            recorded: rec.scenario,
        });
    }
    if sc.pinned.iter().any(|p| p.0 == seed) {
        eprintln!(
            "faultline: seed {} is already pinned in {}",
            rec.seed, rec.file
        );
        return Ok(());
    }
    let note = match &rec.failure {
        Some(f) => format!("check \"{}\" at t={:.9}s", f.check, f.t_ns as f64 / 1e9),
        None => "passed when pinned".to_string(),
    };
    let mut text = std::fs::read_to_string(file).map_err(PathError::io(file))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "\n[[pinned]]\nseed = \"{}\"\nnote = {:?}\n",
        rec.seed, note
    ));
    std::fs::write(file, text).map_err(PathError::io(file))?;
    eprintln!(
        "faultline: pinned seed {} in {}: every `faultline run {}` runs it first",
        rec.seed, rec.file, rec.file
    );
    Ok(())
}
