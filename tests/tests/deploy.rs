//! The Kubernetes and GitHub Actions recipes under deploy/ (issue 20):
//! their shape (the YAML parsed, the fields faultline relies on checked),
//! one command for all three engines (the Job's, the workflow's shard step
//! and the Slurm script's), and the recipes run here: the Job's command line
//! once per index with $JOB_COMPLETION_INDEX set, the workflow's shell steps
//! once per matrix entry and then its merge job, each merging to the verdict
//! of the same hunt run locally. The Job's $(SCENARIO), $(SEEDS) and
//! $(ARTIFACTS) are swapped for a small kv hunt and a scratch directory (the
//! image's etcd harness takes minutes a seed); everything else is as written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use faultline_e2e::exec::run_command;
use faultline_e2e::paths::{faultline_bin, scratch_dir, workspace_root};
use faultline_e2e::shards::{
    assert_merge_agrees, hunt_scenario, local_hunt, results_lines, summary_files, HUNT_SEEDS,
};
use serde_yaml::Value;

fn yaml(rel: &str) -> Value {
    let path = workspace_root().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn job() -> Value {
    yaml("deploy/k8s/job.yaml")
}

fn workflow() -> Value {
    yaml("deploy/github-actions/faultline.yml")
}

fn str_of<'a>(v: &'a Value, what: &str) -> &'a str {
    v.as_str()
        .unwrap_or_else(|| panic!("{what}: expected a string, got {v:?}"))
}

/// The Job's one container.
fn container(job: &Value) -> &Value {
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_sequence()
        .expect("containers");
    assert_eq!(containers.len(), 1, "one container per pod");
    &containers[0]
}

/// The container's command, word by word.
fn job_command(job: &Value) -> Vec<String> {
    container(job)["command"]
        .as_sequence()
        .expect("command is a list")
        .iter()
        .map(|w| str_of(w, "command word").to_owned())
        .collect()
}

/// The container's environment (name → value).
fn job_env(job: &Value) -> BTreeMap<String, String> {
    container(job)["env"]
        .as_sequence()
        .expect("env")
        .iter()
        .map(|e| {
            (
                str_of(&e["name"], "env name").to_owned(),
                str_of(&e["value"], "env value").to_owned(),
            )
        })
        .collect()
}

/// The value after `flag` in a command.
fn flag<'a>(command: &'a [String], flag: &str) -> &'a str {
    let i = command
        .iter()
        .position(|w| w == flag)
        .unwrap_or_else(|| panic!("{flag} missing from {command:?}"));
    &command[i + 1]
}

/// Replaces each `$(NAME)` (Kubernetes) or `$NAME` (shell) in `word` with `f(NAME)`.
fn subst(word: &str, f: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, tail) = match after.strip_prefix('(') {
            Some(inner) => inner.split_once(')').expect("closing parenthesis"),
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        out.push_str(&f(name));
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A command in one notation: every variable as `${NAME}`, the Slurm
/// array index as the Job's.
fn canonical(words: &[String]) -> Vec<String> {
    words
        .iter()
        .map(|w| {
            subst(w, &|name| {
                let name = if name == "SLURM_ARRAY_TASK_ID" {
                    "JOB_COMPLETION_INDEX"
                } else {
                    name
                };
                format!("${{{name}}}")
            })
        })
        .collect()
}

/// The words of a one-line shell command (double quotes removed; the
/// recipes quote only whole variables).
fn shell_words(line: &str) -> Vec<String> {
    line.split_whitespace()
        .map(|w| w.replace('"', ""))
        .collect()
}

/// The shard count the Job's command runs with.
fn shard_count(job: &Value) -> u64 {
    flag(&job_command(job), "--shard-count")
        .parse()
        .expect("--shard-count N")
}

#[test]
fn job_manifest_has_the_shape_faultline_relies_on() {
    let job = job();
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    // Pods get $JOB_COMPLETION_INDEX only in an Indexed Job.
    assert_eq!(spec["completionMode"], "Indexed");
    let n = shard_count(&job);
    assert_eq!(spec["completions"].as_u64(), Some(n), "one pod per shard");
    assert_eq!(spec["parallelism"].as_u64(), Some(n));
    // A failing seed exits 1: running the shard again would only repeat it.
    assert_eq!(spec["backoffLimit"].as_u64(), Some(0));
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    let c = container(&job);
    assert_eq!(
        c["securityContext"]["privileged"].as_bool(),
        Some(true),
        "ptrace, seccomp and mount namespaces need it"
    );
    let command = job_command(&job);
    assert_eq!(&command[..2], ["faultline", "run"], "{command:?}");
    assert!(command.contains(&"--keep-going".to_string()));
    // The artifacts (and the results file) land on the shared volume.
    let env = job_env(&job);
    let mount = c["volumeMounts"]
        .as_sequence()
        .expect("volumeMounts")
        .iter()
        .find(|m| m["mountPath"].as_str() == env.get("ARTIFACTS").map(String::as_str))
        .expect("a volume mounted at $(ARTIFACTS)");
    for f in ["--artifacts", "--results"] {
        assert!(
            flag(&command, f).starts_with("$(ARTIFACTS)/"),
            "{f} is on the volume"
        );
    }
    assert!(flag(&command, "--results").contains("$(JOB_COMPLETION_INDEX)"));
    let volume = job["spec"]["template"]["spec"]["volumes"]
        .as_sequence()
        .expect("volumes")
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("the mounted volume");
    assert!(
        volume["persistentVolumeClaim"]["claimName"].is_string(),
        "artifacts outlive the pods"
    );
    // Every $(VAR) the command uses is set (or set by the Job controller).
    for word in &command {
        subst(word, &|name| {
            assert!(
                name == "JOB_COMPLETION_INDEX" || env.contains_key(name),
                "$({name}) is not in the container's env"
            );
            String::new()
        });
    }
    let dockerfile = std::fs::read_to_string(workspace_root().join("deploy/k8s/Dockerfile"))
        .expect("deploy/k8s/Dockerfile");
    assert!(dockerfile.contains("FROM debian:12"), "a Debian 12 base");
    for needed in [
        "faultline",
        "libfaultline_preload.so",
        "etcd-workload",
        "harness/etcd-binary",
        "etcd-server",
    ] {
        assert!(dockerfile.contains(needed), "the image lacks {needed}");
    }
    assert!(
        workspace_root()
            .join("target/release")
            .join("etcd-workload")
            .is_file()
            && workspace_root().join(env["SCENARIO"].as_str()).is_file(),
        "the Job's scenario and its client exist where the image puts them"
    );
}

#[test]
fn workflow_and_slurm_script_run_the_jobs_command() {
    let job = job();
    let want = canonical(&job_command(&job));
    let wf = workflow();
    let shard = &wf["jobs"]["shard"];
    let n = shard_count(&job);
    let matrix: Vec<u64> = shard["strategy"]["matrix"]["index"]
        .as_sequence()
        .expect("matrix.index")
        .iter()
        .map(|v| v.as_u64().expect("index"))
        .collect();
    assert_eq!(
        matrix,
        (0..n).collect::<Vec<_>>(),
        "one matrix job per shard"
    );
    assert_eq!(shard["strategy"]["fail-fast"].as_bool(), Some(false));
    assert_eq!(shard["env"]["JOB_COMPLETION_INDEX"], "${{ matrix.index }}");
    let run_step = step_named(shard, "run the shard");
    assert_eq!(
        canonical(&shell_words(str_of(&run_step["run"], "run"))),
        want
    );
    // The same scenario, seeds and artifacts directory as the Job.
    for (k, v) in job_env(&job) {
        assert_eq!(wf["env"][k.as_str()].as_str(), Some(v.as_str()), "env {k}");
    }
    let merge = &wf["jobs"]["merge"];
    assert_eq!(merge["needs"], "shard");
    assert_eq!(merge["if"], "always()", "merge also when a shard failed");

    let script = std::fs::read_to_string(workspace_root().join("deploy/slurm/faultline.sbatch"))
        .expect("deploy/slurm/faultline.sbatch");
    let exec = script
        .lines()
        .find_map(|l| l.strip_prefix("exec "))
        .expect("an exec line");
    assert_eq!(canonical(&shell_words(exec)), want);
    assert!(script.contains(&format!("#SBATCH --array=0-{}", n - 1)));
}

/// The step of `job` named `name`.
fn step_named<'a>(job: &'a Value, name: &str) -> &'a Value {
    steps(job)
        .iter()
        .find(|s| s["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no step {name:?}"))
}

fn steps(job: &Value) -> &[Value] {
    job["steps"].as_sequence().expect("steps")
}

/// Runs a workflow job's shell steps as the runner would (bash -eo
/// pipefail, each step with the workflow's and the job's env, and after
/// its `if`: success() by default, always() or failure()), here in `cwd`.
/// Returns whether every step succeeded and the log.
fn run_steps(job: &Value, env: &BTreeMap<String, String>, cwd: &Path) -> (bool, String) {
    let mut ok = true;
    let mut log = String::new();
    for step in steps(job) {
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        let runs = match step["if"].as_str().unwrap_or("success()") {
            "always()" => true,
            "failure()" => !ok,
            "success()" => ok,
            other => panic!("a step condition this test does not know: {other}"),
        };
        if !runs {
            continue;
        }
        let mut c = Command::new("bash");
        c.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(cwd)
            .envs(env);
        let r = run_command(c, Duration::from_secs(300));
        log.push_str(&format!("--- {script}\n{r}\n"));
        ok &= r.code() == 0;
    }
    (ok, log)
}

/// PATH with faultline first, as in the image.
fn path_with_faultline() -> String {
    format!(
        "{}:{}",
        faultline_bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The seed directories under `<runs>/<scenario>/`.
fn seed_dirs(runs: &Path) -> Vec<u64> {
    let mut out = Vec::new();
    for scenario in std::fs::read_dir(runs).unwrap() {
        for d in std::fs::read_dir(scenario.unwrap().path()).unwrap() {
            let p = d.unwrap().path();
            if p.is_dir() {
                let name = p.file_name().unwrap().to_str().unwrap().to_owned();
                out.push(u64::from_str_radix(&name, 16).expect("a seed directory"));
            }
        }
    }
    out
}

#[test]
fn job_and_workflow_run_here_and_merge_to_the_local_verdict() {
    let dir = scratch_dir("deploy");
    let file = hunt_scenario("deploy-hunt", &dir);
    let local = local_hunt(&file, &dir.join("local"));
    let failing: Vec<u64> = local
        .1
        .iter()
        .filter(|(_, v)| !v.0)
        .map(|(s, _)| *s)
        .collect();
    let job = job();
    let n = shard_count(&job);
    let small = |artifacts: &Path| {
        BTreeMap::from([
            ("SCENARIO".to_string(), file.display().to_string()),
            ("SEEDS".to_string(), HUNT_SEEDS.to_string()),
            ("ARTIFACTS".to_string(), artifacts.display().to_string()),
            ("PATH".to_string(), path_with_faultline()),
        ])
    };

    // Kubernetes: the pods share one volume.
    let volume = dir.join("k8s-volume");
    std::fs::create_dir_all(&volume).unwrap();
    for i in 0..n {
        let mut env = job_env(&job);
        env.extend(small(&volume));
        env.insert("JOB_COMPLETION_INDEX".into(), i.to_string());
        let argv: Vec<String> = job_command(&job)
            .iter()
            .map(|w| subst(w, &|name| env[name].clone()))
            .collect();
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]).envs(&env).current_dir(&dir);
        let pod = run_command(c, Duration::from_secs(300));
        assert!(
            matches!(pod.code(), 0 | 1),
            "pod {i}: a verdict, not an error\n{pod}"
        );
    }
    let runs = volume.join("runs");
    assert_eq!(summary_files(&runs).len() as u64, n, "one summary per pod");
    assert_merge_agrees(&local, std::slice::from_ref(&runs));
    let results: Vec<PathBuf> = (0..n)
        .map(|i| volume.join(format!("results-{i}.jsonl")))
        .collect();
    assert_eq!(
        results_lines(&results),
        local.1,
        "the pods' --results lines"
    );

    // GitHub Actions: each matrix job on its own machine, then the merge job
    // on what they uploaded.
    let wf = workflow();
    let shard = &wf["jobs"]["shard"];
    let upload = steps(shard)
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact"))
        })
        .expect("the shard job uploads");
    assert_eq!(upload["if"], "always()");
    assert_eq!(upload["with"]["path"], wf["env"]["ARTIFACTS"]);
    let merge_dir = dir.join("actions-merge");
    let shards_dir = merge_dir.join(str_of(
        &steps(&wf["jobs"]["merge"])[0]["with"]["path"],
        "download path",
    ));
    std::fs::create_dir_all(&shards_dir).unwrap();
    for i in 0..n {
        let machine = dir.join(format!("actions-machine-{i}"));
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        for scope in [&wf["env"], &shard["env"]] {
            for (k, v) in scope.as_mapping().expect("env map") {
                let v = str_of(v, "env value").replace("${{ matrix.index }}", &i.to_string());
                env.insert(str_of(k, "env name").to_owned(), v);
            }
        }
        env.extend(small(&machine));
        let (_, log) = run_steps(shard, &env, &dir);
        // What upload-artifact then download-artifact make of it.
        let name = str_of(&upload["with"]["name"], "artifact name")
            .replace("${{ matrix.index }}", &i.to_string());
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&machine)
            .arg(shards_dir.join(name))
            .status()
            .unwrap();
        assert!(copied.success(), "{log}");
    }
    let mut env = BTreeMap::from([("PATH".to_string(), path_with_faultline())]);
    env.extend(small(&dir.join("unused")));
    let (ok, log) = run_steps(&wf["jobs"]["merge"], &env, &merge_dir);
    assert_eq!(ok, failing.is_empty(), "the merge job's verdict\n{log}");
    let shard_runs: Vec<PathBuf> = (0..n)
        .map(|i| shards_dir.join(format!("shard-{i}/runs")))
        .collect();
    assert_merge_agrees(&local, &shard_runs);
    let failure_upload = steps(&wf["jobs"]["merge"])
        .iter()
        .find(|s| s["if"] == "failure()")
        .expect("a step for a failed merge");
    assert_eq!(failure_upload["with"]["path"], "shards/*/runs");
    // What it uploads: the failing seeds' artifacts, and only theirs.
    let mut uploaded: Vec<u64> = shard_runs.iter().flat_map(|r| seed_dirs(r)).collect();
    uploaded.sort();
    assert_eq!(uploaded, failing, "\n{log}");
}
