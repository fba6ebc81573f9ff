//! `faultline shrink DIR`: from a failing seed to its cause. The seed's
//! recorded fault schedule (faults.json) is replayed with faults left out,
//! by delta debugging, until no fault can be removed without the failing
//! check passing; the faults that remain are written as planned entries
//! of `DIR/shrunk.toml`. DIR's own artifacts are never changed: attempts
//! run under DIR/shrink/, and only the last failing one is kept.

use std::path::{Path, PathBuf};

use crate::cmd::cli::ShrinkArgs;
use crate::cmd::ddmin::{ddmin, Probe};
use crate::cmd::replay::{Recorded, ReplayError};
use crate::cmd::seed::{run_seed, SeedError, SeedJob};
use crate::path_error::PathError;
use crate::report::artifacts::Verdict;
use crate::scenario::schedule_file::{PlannedFault, Schedule, ScheduleError};
use crate::scenario::shrunk_file;
use crate::sim::seeds::SeedTextError;

/// Exit code: DIR is not a failing seed's artifact directory.
const EXIT_BAD_INPUT: i32 = 2;

/// Why `shrink` could not do its job.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    /// DIR cannot be read back as a seed's artifacts (bad input).
    #[error(transparent)]
    Recorded(#[from] ReplayError),
    /// DIR/faults.json is unusable (bad input).
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// DIR's seed did not fail a check (bad input).
    #[error("{dir}: not a failing seed (its verdict is {verdict}); shrink needs a seed whose check failed")]
    NotFailing {
        /// The artifact directory.
        dir: PathBuf,
        /// Its verdict, as a word.
        verdict: &'static str,
    },
    /// report.json's trace hash does not parse (bad input).
    #[error(transparent)]
    TraceHash(SeedTextError),
    /// The recorded scenario text is not TOML any more (bad input).
    #[error("{file}: {source}")]
    Rewrite {
        /// The scenario file.
        file: PathBuf,
        /// What toml_edit said.
        source: toml_edit::TomlError,
    },
    /// An attempt could not be run (faultline's failure).
    #[error(transparent)]
    Run(#[from] SeedError),
    /// An attempt ended in faultline's own error (faultline's failure).
    #[error("attempt {attempt} failed in faultline: {message}")]
    Attempt {
        /// The attempt's number.
        attempt: u64,
        /// The failure's message in its report.
        message: String,
    },
    /// The whole schedule did not give the recorded run again (faultline's
    /// failure).
    #[error("the recorded schedule did not give the recorded run again (trace-hash 0x{hash:016x}, recorded {recorded}): see {dir}/")]
    NotReproduced {
        /// The first attempt's trace hash.
        hash: u64,
        /// The recorded trace hash, as report.json has it.
        recorded: String,
        /// The first attempt's directory.
        dir: PathBuf,
    },
    /// DIR/shrink/ or DIR/shrunk.toml cannot be written (faultline's failure).
    #[error(transparent)]
    File(#[from] PathError),
    /// SIGINT or SIGTERM (exit 128+N).
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

impl ShrinkError {
    fn code(&self) -> i32 {
        match self {
            ShrinkError::Recorded(_)
            | ShrinkError::Schedule(_)
            | ShrinkError::NotFailing { .. }
            | ShrinkError::TraceHash(_)
            | ShrinkError::Rewrite { .. } => EXIT_BAD_INPUT,
            ShrinkError::Run(_)
            | ShrinkError::Attempt { .. }
            | ShrinkError::NotReproduced { .. }
            | ShrinkError::File(_) => crate::cmd::exec::EXIT_FAULTLINE_ERROR,
            ShrinkError::Interrupted(sig) => 128 + sig,
        }
    }
}

/// Runs the verb; returns the process exit code.
pub fn shrink(args: &ShrinkArgs) -> i32 {
    match try_shrink(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            e.code()
        }
    }
}

/// The search's state: the job, where attempts go, the best so far.
struct Search<'a> {
    job: SeedJob<'a>,
    seed: u64,
    /// The failing check to keep failing.
    check: String,
    /// Faults every attempt keeps (node settings).
    fixed: Vec<u32>,
    schedule: Schedule,
    work: PathBuf,
    runs: u64,
    max_runs: u64,
    /// The last attempt that failed the same way, and its directory.
    best: Option<PathBuf>,
    /// Why the search stopped early, if it did.
    broke: Option<ShrinkError>,
}

impl Search<'_> {
    /// Runs the seed with the faults numbered `keep` (and the fixed ones);
    /// `Ok(true)` if the same check fails, with the trace hash.
    fn attempt(&mut self, keep: &[u32], total: usize) -> Result<(bool, u64), ShrinkError> {
        self.runs += 1;
        let dir = self.work.join(format!("attempt-{}", self.runs));
        let numbers: Vec<u32> = self.fixed.iter().chain(keep).copied().collect();
        self.job.schedule = Some(self.schedule.only(&numbers));
        let result = run_seed(&self.job, self.seed, &dir)?;
        if let Some(sig) = crate::host::interrupt::received() {
            return Err(ShrinkError::Interrupted(sig));
        }
        let same = result.verdict() == Verdict::Fail && result.check.as_ref() == Some(&self.check);
        let what = match (result.verdict(), &result.check) {
            (Verdict::Error, _) => {
                return Err(ShrinkError::Attempt {
                    attempt: self.runs,
                    message: result.message.unwrap_or_default(),
                })
            }
            (Verdict::Pass, _) => "passes".to_string(),
            (_, Some(check)) if same => format!("fails {check:?}: kept"),
            (v, check) => format!(
                "{} {:?} instead: counts as passing",
                v.word(),
                check.as_deref().unwrap_or("-")
            ),
        };
        eprintln!(
            "faultline: shrink attempt {}: {} of {total} fault(s){}: {what}",
            self.runs,
            keep.len(),
            numbers_words(keep)
        );
        if same {
            if let Some(old) = self.best.replace(dir) {
                let _ = std::fs::remove_dir_all(old);
            }
        } else if self.runs > 1 {
            // The first run (the whole schedule) stays when it did not
            // fail as recorded: it is what the error points to.
            let _ = std::fs::remove_dir_all(&dir);
        }
        Ok((same, result.hash))
    }

    /// `attempt` as ddmin sees it: a broken run or a spent budget stops it.
    fn probe(&mut self, keep: &[u32], total: usize) -> Probe {
        if self.runs >= self.max_runs {
            return Probe::Stop;
        }
        match self.attempt(keep, total) {
            Ok((true, _)) => Probe::Fails,
            Ok((false, _)) => Probe::Passes,
            Err(e) => {
                self.broke = Some(e);
                Probe::Stop
            }
        }
    }
}

/// ` (#1 #4 #7)` for a few faults, nothing for many.
fn numbers_words(keep: &[u32]) -> String {
    if keep.is_empty() || keep.len() > 8 {
        return String::new();
    }
    let list: Vec<String> = keep.iter().map(|n| format!("#{n}")).collect();
    format!(" ({})", list.join(" "))
}

fn try_shrink(args: &ShrinkArgs) -> Result<(), ShrinkError> {
    let recorded = Recorded::read(&args.dir)?;
    let rec = &recorded.rec;
    let check = failing_check(&recorded)?;
    let schedule = recorded.schedule()?;
    let faults = schedule.faults();
    let (fixed, candidates): (Vec<&PlannedFault>, Vec<&PlannedFault>) =
        faults.iter().partition(|f| f.is_setting());
    let numbers: Vec<u32> = candidates.iter().map(|f| f.number).collect();
    let work = args.dir.join("shrink");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(PathError::io(&work))?;
    crate::host::interrupt::install();
    eprintln!(
        "faultline: shrinking seed {} of {:?}: check {check:?} fails with {} fault(s); at most {} run(s), in {}/",
        rec.seed,
        rec.scenario,
        numbers.len(),
        args.max_runs,
        work.display()
    );
    let mut search = Search {
        job: recorded.job(args.seed_timeout)?,
        seed: recorded.seed,
        check: check.clone(),
        fixed: fixed.iter().map(|f| f.number).collect(),
        schedule,
        work,
        runs: 0,
        max_runs: args.max_runs.max(1),
        best: None,
        broke: None,
    };
    // The whole schedule first: it must be the recorded run again.
    let (same, hash) = search.attempt(&numbers, numbers.len())?;
    let recorded_hash =
        crate::sim::seeds::parse_seed(&rec.trace_hash).map_err(ShrinkError::TraceHash)?;
    if !same || hash != recorded_hash {
        return Err(ShrinkError::NotReproduced {
            hash,
            recorded: rec.trace_hash.clone(),
            dir: search.work.join("attempt-1"),
        });
    }
    let total = numbers.len();
    let (left, finished) = ddmin(&numbers, |keep| search.probe(keep, total));
    if let Some(e) = search.broke.take() {
        return Err(e);
    }
    let kept: Vec<PlannedFault> = faults
        .iter()
        .filter(|f| f.is_setting() || left.contains(&f.number))
        .cloned()
        .collect();
    let shrunk = write_shrunk(&recorded, &kept, &search.job.node_cwd())?;
    report(&search, &kept, finished, &shrunk);
    Ok(())
}

/// The check a recorded seed failed; bad input if it did not fail.
fn failing_check(recorded: &Recorded) -> Result<String, ShrinkError> {
    match (&recorded.rec.verdict, &recorded.rec.failure) {
        (Verdict::Fail, Some(f)) => Ok(f.check.clone()),
        (v, _) => Err(ShrinkError::NotFailing {
            dir: recorded.dir.clone(),
            verdict: v.word(),
        }),
    }
}

/// Writes DIR/shrunk.toml, whose nodes run in `folder` (where the seed's
/// ran); returns its path.
fn write_shrunk(
    recorded: &Recorded,
    kept: &[PlannedFault],
    folder: &Path,
) -> Result<PathBuf, ShrinkError> {
    let text = shrunk_file::rewrite(&recorded.text, &recorded.sc, recorded.seed, kept, folder)
        .map_err(|source| ShrinkError::Rewrite {
            file: recorded.file.clone(),
            source,
        })?;
    let path = recorded.dir.join("shrunk.toml");
    let header = format!(
        "# Written by `faultline shrink {}`: seed {}'s faults, reduced to those its failure needs.\n",
        recorded.dir.display(),
        recorded.rec.seed
    );
    std::fs::write(&path, header + &text).map_err(PathError::io(&path))?;
    Ok(path)
}

/// The closing lines: what is left, where, and the command that fails.
fn report(search: &Search, kept: &[PlannedFault], finished: bool, shrunk: &Path) {
    let faults: Vec<&PlannedFault> = kept.iter().filter(|f| !f.is_setting()).collect();
    let how = if finished {
        "none of them can be left out"
    } else {
        "stopped at --max-runs: perhaps not the fewest"
    };
    eprintln!(
        "faultline: shrunk to {} fault(s) in {} run(s) ({how}):",
        faults.len(),
        search.runs
    );
    for f in &faults {
        match shrunk_file::entry_line(f, search.job.sc.duration_ns) {
            Some(entry) => eprintln!("faultline:   #{}: {entry}", f.number),
            None => eprintln!(
                "faultline:   {} (no [[fault]] entry can say it)",
                f.describe()
            ),
        }
    }
    if let Some(best) = &search.best {
        eprintln!("faultline: the last failing attempt: {}/", best.display());
    }
    eprintln!("faultline: wrote {}", shrunk.display());
    eprintln!(
        "faultline: the same failure again: faultline run {} --seed 0x{:016x}",
        shrunk.display(),
        search.seed
    );
}
