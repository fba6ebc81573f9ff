//! `faultline merge DIR...`: the summaries of sharded runs (one per machine
//! or CI job) combined into one verdict.

use std::path::Path;

use crate::path_error::{read_json, PathError};
use crate::report::summary::Summary;

/// Reads every `<DIR>/<scenario>/summary*.json` and prints the combined verdict.
pub fn merge(dirs: &[std::path::PathBuf]) -> i32 {
    let mut summaries = Vec::new();
    for dir in dirs {
        if let Err(e) = collect(dir, &mut summaries) {
            eprintln!("faultline: error: {e}");
            return 2;
        }
    }
    if summaries.is_empty() {
        eprintln!(
            "faultline: error: no summary*.json under {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return 2;
    }
    let mut failed = 0;
    let mut total = 0;
    for (path, s) in &summaries {
        let bad: Vec<String> = s
            .seeds
            .iter()
            .filter(|r| !r.pass)
            .map(|r| format!("0x{:016x}", r.seed))
            .collect();
        total += s.seeds.len();
        failed += bad.len();
        eprintln!(
            "faultline: {}: scenario {:?}, {} seed(s), {} failed {}",
            path,
            s.scenario,
            s.seeds.len(),
            bad.len(),
            bad.join(" ")
        );
    }
    eprintln!(
        "faultline: merged {} summaries: {total} seed(s), {failed} failed",
        summaries.len()
    );
    i32::from(failed > 0)
}

fn collect(dir: &Path, out: &mut Vec<(String, Summary)>) -> Result<(), PathError> {
    let entries = std::fs::read_dir(dir).map_err(PathError::io(dir))?;
    let mut scenario_dirs: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    scenario_dirs.sort();
    for sdir in scenario_dirs {
        let mut files: Vec<_> = std::fs::read_dir(&sdir)
            .map_err(PathError::io(&sdir))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("summary") && n.ends_with(".json"))
            })
            .collect();
        files.sort();
        for f in files {
            let s: Summary = read_json(&f)?;
            out.push((f.display().to_string(), s));
        }
    }
    Ok(())
}
