//! Seeds spread over a real Slurm (issue 20): a one-machine cluster (munged,
//! slurmctld, slurmd; see `faultline_e2e::slurm`) runs the README's job
//! script, deploy/slurm/faultline.sbatch, as a 4-task `sbatch --array`; each
//! task takes its shard from $SLURM_ARRAY_TASK_ID. `faultline merge` of the
//! shards must give the verdict, the seeds and the trace hashes of the same
//! hunt run locally.

use std::process::Command;
use std::time::Duration;

use faultline_e2e::exec::run_command;
use faultline_e2e::paths::{faultline_bin, scratch_dir, workspace_root};
use faultline_e2e::shards::{
    assert_merge_agrees, hunt_scenario, local_hunt, results_lines, summary_files, HUNT_SEEDS,
};
use faultline_e2e::slurm::Slurm;

#[test]
fn sbatch_array_shards_merge_to_the_local_verdict() {
    let dir = scratch_dir("slurm");
    let file = hunt_scenario("slurm-hunt", &dir);
    let local = local_hunt(&file, &dir.join("local"));

    let slurm = Slurm::start(&dir.join("cluster"));
    let hunt = dir.join("hunt");
    std::fs::create_dir_all(&hunt).unwrap();
    let bin_dir = faultline_bin().parent().unwrap().to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut sbatch = slurm.command("sbatch");
    // sbatch passes its environment to the tasks, as on a login node.
    sbatch
        .arg("--wait")
        .arg(format!("--output={}/task-%a.out", hunt.display()))
        .arg(format!("--chdir={}", dir.display()))
        .arg(workspace_root().join("deploy/slurm/faultline.sbatch"))
        .env("SCENARIO", &file)
        .env("SEEDS", HUNT_SEEDS.to_string())
        .env("ARTIFACTS", &hunt)
        .env("PATH", path)
        .env_remove("JOB_COMPLETION_INDEX");
    let submitted = run_command(sbatch, Duration::from_secs(600));
    let task_output = || {
        (0..4)
            .map(|i| {
                let f = hunt.join(format!("task-{i}.out"));
                format!(
                    "--- task {i}:\n{}",
                    std::fs::read_to_string(f).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    // `sbatch --wait` exits with the highest exit code of the array's tasks:
    // 1 when a shard found a failing seed, as the local run does.
    assert_eq!(
        submitted.code(),
        local.0.code(),
        "\n{submitted}\n{}\n{}",
        task_output(),
        slurm.logs()
    );
    let summaries: Vec<String> = summary_files(&hunt.join("runs"))
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        summaries,
        (0..4)
            .map(|i| format!("summary-shard-{i}-of-4.json"))
            .collect::<Vec<_>>(),
        "each array task ran its own shard\n{}",
        task_output()
    );
    assert_merge_agrees(&local, &[hunt.join("runs")]);
    let results: Vec<_> = (0..4)
        .map(|i| hunt.join(format!("results-{i}.jsonl")))
        .collect();
    assert_eq!(results_lines(&results), local.1, "the --results lines");
    drop(slurm);
    // The cluster is gone with its jobs: nothing of it is left running.
    let left = Command::new("pgrep")
        .args(["-f", &dir.display().to_string()])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}
