//! `faultline run`: scenario files, running them, and the per-seed
//! artifacts they leave.
//!
//! Tests describe a scenario with [`Scenario`] (nodes with absolute command
//! paths to built test programs, network settings, partitions), write it as
//! TOML into a scratch directory ([`Scenario::write`]), or write raw text for
//! malformed-input tests ([`ScenarioFile::raw`]). [`RunScenario`] runs
//! `faultline run FILE [--seed S | --seeds N] --artifacts DIR` with a
//! wall-clock kill timeout; [`ScenarioRun`] parses the per-seed verdicts and
//! reads each node's output from
//! `<artifacts>/<scenario name>/<seed as 16 hex digits>/<node>.stdout|.stderr`.

use std::ffi::OsStr;
use std::fmt::{self, Write as _};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::exec::{run_command, tail, Run, DEFAULT_TIMEOUT};
use crate::paths::faultline_bin;
use crate::program::Program;
use crate::summary::{NodeOutcome, SeedReport};

/// A scenario to write as TOML (builder).
#[derive(Clone, Debug)]
pub struct Scenario {
    name: String,
    duration: String,
    seeds: Option<u32>,
    delay: Option<(String, String)>,
    udp_loss: Option<f64>,
    nodes: Vec<Node>,
    partitions: Vec<Partition>,
}

/// One `[[node]]`: a host name and the command it runs.
#[derive(Clone, Debug)]
pub struct Node {
    name: String,
    command: Vec<String>,
    env: Vec<(String, String)>,
}

/// One `[[fault]]` of kind `partition`.
#[derive(Clone, Debug)]
pub struct Partition {
    at: String,
    until: Option<String>,
    isolate: Vec<String>,
    one_way: Option<bool>,
}

impl Scenario {
    /// A scenario named `name` whose seeds run `duration` of virtual time
    /// (a faultline duration such as `"20s"`).
    pub fn new(name: &str, duration: &str) -> Self {
        Self {
            name: name.to_owned(),
            duration: duration.to_owned(),
            seeds: None,
            delay: None,
            udp_loss: None,
            nodes: Vec::new(),
            partitions: Vec::new(),
        }
    }

    /// The scenario's name (it names the artifact directory and derives the seeds).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `seeds = N`: the default for `--seeds`.
    pub fn seeds(mut self, seeds: u32) -> Self {
        self.seeds = Some(seeds);
        self
    }

    /// `[net] delay_min`, `delay_max`: per-message delay, uniform in between.
    pub fn delay(mut self, min: &str, max: &str) -> Self {
        self.delay = Some((min.to_owned(), max.to_owned()));
        self
    }

    /// `[net] udp_loss`: probability that a datagram is dropped.
    pub fn udp_loss(mut self, loss: f64) -> Self {
        self.udp_loss = Some(loss);
        self
    }

    /// Appends a node (nodes get 127.77.0.1, .2, ... in this order).
    pub fn node(mut self, node: Node) -> Self {
        self.nodes.push(node);
        self
    }

    /// Appends a partition fault.
    pub fn partition(mut self, partition: Partition) -> Self {
        self.partitions.push(partition);
        self
    }

    /// The scenario as TOML text, in the order: name, duration, seeds,
    /// `[net]`, nodes, faults.
    pub fn to_toml(&self) -> String {
        let mut text = String::new();
        let mut line = |s: String| {
            text.push_str(&s);
            text.push('\n');
        };
        line(format!("name = {}", toml_string(&self.name)));
        line(format!("duration = {}", toml_string(&self.duration)));
        if let Some(seeds) = self.seeds {
            line(format!("seeds = {seeds}"));
        }
        if self.delay.is_some() || self.udp_loss.is_some() {
            line(String::new());
            line("[net]".into());
            if let Some((min, max)) = &self.delay {
                line(format!("delay_min = {}", toml_string(min)));
                line(format!("delay_max = {}", toml_string(max)));
            }
            if let Some(loss) = self.udp_loss {
                line(format!("udp_loss = {loss:?}"));
            }
        }
        for node in &self.nodes {
            line(String::new());
            line("[[node]]".into());
            line(format!("name = {}", toml_string(&node.name)));
            line(format!("command = {}", toml_array(&node.command)));
            if !node.env.is_empty() {
                let pairs: Vec<String> = node
                    .env
                    .iter()
                    .map(|(k, v)| format!("{} = {}", toml_key(k), toml_string(v)))
                    .collect();
                line(format!("env = {{ {} }}", pairs.join(", ")));
            }
        }
        for fault in &self.partitions {
            line(String::new());
            line("[[fault]]".into());
            line("kind = \"partition\"".into());
            line(format!("at = {}", toml_string(&fault.at)));
            if let Some(until) = &fault.until {
                line(format!("until = {}", toml_string(until)));
            }
            line(format!("isolate = {}", toml_array(&fault.isolate)));
            if let Some(one_way) = fault.one_way {
                line(format!("one_way = {one_way}"));
            }
        }
        text
    }

    /// Writes the scenario to `<dir>/<name>.toml`.
    pub fn write(&self, dir: &Path) -> ScenarioFile {
        let path = dir.join(format!("{}.toml", self.name));
        fs::write(&path, self.to_toml())
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        ScenarioFile {
            path,
            name: Some(self.name.clone()),
        }
    }
}

impl Node {
    /// A node named `name` (its host name) running `command` (program and
    /// arguments; paths must be valid UTF-8).
    pub fn new<I, S>(name: &str, command: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let command = command
            .into_iter()
            .map(|word| {
                let word = word.as_ref();
                word.to_str()
                    .unwrap_or_else(|| panic!("command word {word:?} is not UTF-8"))
                    .to_owned()
            })
            .collect();
        Self {
            name: name.to_owned(),
            command,
            env: Vec::new(),
        }
    }

    /// A node running a test program (built if needed, by absolute path)
    /// with `args`.
    pub fn program<I, S>(name: &str, program: Program, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = vec![program.path().into_os_string()];
        command.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        Self::new(name, command)
    }

    /// Adds `key = value` to the node's `env` table.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }
}

impl Partition {
    /// Cuts the `isolate` hosts off from all others from virtual time `at`.
    pub fn new<I, S>(at: &str, isolate: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Self {
            at: at.to_owned(),
            until: None,
            isolate: isolate.into_iter().map(|s| s.as_ref().to_owned()).collect(),
            one_way: None,
        }
    }

    /// `until`: when the partition heals.
    pub fn until(mut self, until: &str) -> Self {
        self.until = Some(until.to_owned());
        self
    }

    /// `one_way`: only traffic from the isolated hosts is dropped.
    pub fn one_way(mut self, one_way: bool) -> Self {
        self.one_way = Some(one_way);
        self
    }
}

/// A scenario file on disk.
#[derive(Clone, Debug)]
pub struct ScenarioFile {
    /// Where it is.
    pub path: PathBuf,
    /// The scenario's name, if known (needed to find artifacts).
    pub name: Option<String>,
}

impl ScenarioFile {
    /// Writes `text` verbatim to `<dir>/<file_name>` (for malformed input).
    pub fn raw(dir: &Path, file_name: &str, text: &str) -> Self {
        let path = dir.join(file_name);
        fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        // The top-level `name = "..."`, if the text has one, locates the artifacts.
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|rest| rest.split('"').next())
            .map(str::to_owned);
        Self { path, name }
    }

    /// A `faultline run` of this file, with artifacts in `<file's dir>/artifacts`.
    pub fn runner(&self) -> RunScenario {
        let dir = self.path.parent().expect("a scenario file has a parent");
        RunScenario {
            file: self.path.clone(),
            name: self.name.clone(),
            seed: None,
            seeds: None,
            artifacts: Some(dir.join("artifacts")),
            flags: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            cwd: None,
        }
    }
}

/// A `faultline run FILE [options]` invocation (builder).
#[derive(Clone, Debug)]
pub struct RunScenario {
    file: PathBuf,
    name: Option<String>,
    seed: Option<String>,
    seeds: Option<u32>,
    artifacts: Option<PathBuf>,
    flags: Vec<String>,
    timeout: Duration,
    cwd: Option<PathBuf>,
}

impl RunScenario {
    /// Runs faultline from `dir` (default: the test's own working directory).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Adds a flag of `faultline run` (e.g. `--preload`).
    pub fn flag(mut self, flag: &str) -> Self {
        self.flags.push(flag.to_owned());
        self
    }

    /// `--seed S` with S in decimal.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed.to_string());
        self
    }

    /// `--seed S` with S exactly as given (e.g. `"0x7"`).
    pub fn seed_text(mut self, seed: &str) -> Self {
        self.seed = Some(seed.to_owned());
        self
    }

    /// `--seeds N`.
    pub fn seeds(mut self, seeds: u32) -> Self {
        self.seeds = Some(seeds);
        self
    }

    /// `--artifacts DIR`.
    pub fn artifacts(mut self, dir: impl Into<PathBuf>) -> Self {
        self.artifacts = Some(dir.into());
        self
    }

    /// The artifacts directory passed, if any.
    pub fn artifacts_dir(&self) -> Option<&Path> {
        self.artifacts.as_deref()
    }

    /// Replaces the wall-clock kill timeout ([`DEFAULT_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The faultline command line, ready to spawn (stdio not configured).
    pub fn command(&self) -> Command {
        let mut command = Command::new(faultline_bin());
        command.arg("run").arg(&self.file);
        if let Some(seed) = &self.seed {
            command.arg("--seed").arg(seed);
        }
        if let Some(seeds) = self.seeds {
            command.arg("--seeds").arg(seeds.to_string());
        }
        if let Some(dir) = &self.artifacts {
            command.arg("--artifacts").arg(dir);
        }
        command.args(&self.flags);
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
    }

    /// Runs the scenario to completion (see [`run_command`]).
    pub fn run(&self) -> ScenarioRun {
        ScenarioRun {
            run: run_command(self.command(), self.timeout),
            name: self.name.clone(),
            // A relative artifacts path is faultline's, from its directory.
            artifacts: self.artifacts.as_ref().map(|a| match &self.cwd {
                Some(cwd) => cwd.join(a),
                None => a.clone(),
            }),
        }
    }
}

/// What one `faultline run` produced.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    /// faultline's exit status and output.
    pub run: Run,
    /// The scenario's name, if known.
    pub name: Option<String>,
    /// The artifacts directory passed, if any.
    pub artifacts: Option<PathBuf>,
}

impl ScenarioRun {
    /// faultline's exit code.
    pub fn code(&self) -> i32 {
        self.run.code()
    }

    /// Asserts faultline exited with `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code(), code, "unexpected exit code of `run`\n{self}");
        self
    }

    /// Asserts the run exited 0 and every seed and node passed.
    #[track_caller]
    pub fn expect_pass(&self) -> &Self {
        self.expect_code(0);
        let reports = self.reports();
        assert!(!reports.is_empty(), "no seed verdict lines\n{self}");
        for report in &reports {
            assert!(report.pass, "seed {:#018x} FAILed\n{self}", report.seed);
            for (node, outcome) in &report.nodes {
                assert!(
                    outcome.passes(),
                    "node {node} {outcome:?} in a passing seed\n{self}"
                );
            }
        }
        self
    }

    /// Every seed verdict, in order (panics with context on malformed lines).
    #[track_caller]
    pub fn reports(&self) -> Vec<SeedReport> {
        SeedReport::all_from_stderr(&self.run.stderr).unwrap_or_else(|e| panic!("{e}\n{self}"))
    }

    /// The verdict of the first seed that failed; panics with `missing` and
    /// the run's output if none did.
    #[track_caller]
    pub fn first_failure(&self, missing: &str) -> SeedReport {
        self.reports()
            .into_iter()
            .find(|r| !r.pass)
            .unwrap_or_else(|| panic!("{missing}\n{self}"))
    }

    /// The one seed verdict (panics unless there is exactly one).
    #[track_caller]
    pub fn report(&self) -> SeedReport {
        let mut reports = self.reports();
        assert_eq!(reports.len(), 1, "expected one seed verdict\n{self}");
        reports.remove(0)
    }

    /// `<artifacts>/<name>/<seed as 16 hex digits>`.
    #[track_caller]
    pub fn seed_dir(&self, seed: u64) -> PathBuf {
        let (Some(artifacts), Some(name)) = (&self.artifacts, &self.name) else {
            panic!("artifacts dir or scenario name unknown\n{self}");
        };
        artifacts.join(name).join(format!("{seed:016x}"))
    }

    /// The bytes node `node` of seed `seed` wrote to `stream` (`"stdout"` or
    /// `"stderr"`), if the artifact exists.
    pub fn node_output(&self, seed: u64, node: &str, stream: &str) -> Option<Vec<u8>> {
        let (artifacts, name) = (self.artifacts.as_ref()?, self.name.as_ref()?);
        fs::read(
            artifacts
                .join(name)
                .join(format!("{seed:016x}"))
                .join(format!("{node}.{stream}")),
        )
        .ok()
    }

    /// Node `node`'s stdout in seed `seed`, as UTF-8 (panics if missing).
    #[track_caller]
    pub fn node_stdout(&self, seed: u64, node: &str) -> String {
        self.node_text(seed, node, "stdout")
    }

    /// Node `node`'s stderr in seed `seed`, as UTF-8 (panics if missing).
    #[track_caller]
    pub fn node_stderr(&self, seed: u64, node: &str) -> String {
        self.node_text(seed, node, "stderr")
    }

    #[track_caller]
    fn node_text(&self, seed: u64, node: &str, stream: &str) -> String {
        let bytes = self.node_output(seed, node, stream).unwrap_or_else(|| {
            panic!(
                "no {stream} artifact for node {node} of seed {seed:#018x} in {}\n{self}",
                self.seed_dir(seed).display()
            )
        });
        String::from_utf8(bytes)
            .unwrap_or_else(|e| panic!("node {node} {stream} is not UTF-8 ({e})\n{self}"))
    }
}

impl fmt::Display for ScenarioRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.run)?;
        let Ok(reports) = SeedReport::all_from_stderr(&self.run.stderr) else {
            return Ok(());
        };
        for report in reports {
            for (node, outcome) in &report.nodes {
                let mut text = String::new();
                for stream in ["stdout", "stderr"] {
                    let body = self
                        .node_output(report.seed, node, stream)
                        .map(|b| tail(&String::from_utf8_lossy(&b), 2000))
                        .unwrap_or_else(|| "(no artifact)".into());
                    let _ = write!(text, "\n--- {stream}:\n{body}");
                }
                write!(
                    f,
                    "\n=== seed {:#018x} node {node} ({}){text}",
                    report.seed,
                    describe_outcome(outcome)
                )?;
            }
        }
        Ok(())
    }
}

fn describe_outcome(outcome: &NodeOutcome) -> String {
    match outcome {
        NodeOutcome::Exit(code) => format!("exit {code}"),
        NodeOutcome::Killed(signal) => format!("killed by {signal}"),
        NodeOutcome::RunningAtEnd => "running at end".into(),
        NodeOutcome::DownAtEnd => "down at end".into(),
    }
}

/// `text` as a TOML basic string.
pub fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn toml_array(words: &[String]) -> String {
    let words: Vec<String> = words.iter().map(|w| toml_string(w)).collect();
    format!("[{}]", words.join(", "))
}

fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_owned()
    } else {
        toml_string(key)
    }
}

/// Whether `text` names line `line` of a file, as `line N` or `:N:`/`:N`
/// (`file:N:col` or `file:N`).
pub fn mentions_line(text: &str, line: u32) -> bool {
    let spelled = format!("line {line}");
    let spelled_out = text
        .match_indices(&spelled)
        .any(|(at, _)| !text[at + spelled.len()..].starts_with(|c: char| c.is_ascii_digit()));
    let colon = format!(":{line}");
    spelled_out
        || text.contains(&format!("{colon}:"))
        || text
            .split_whitespace()
            .any(|w| w.trim_end_matches([',', '.', ')']).ends_with(&colon))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_documented_toml() {
        let scenario = Scenario::new("http-pair", "20s")
            .seeds(3)
            .delay("1ms", "5ms")
            .udp_loss(0.0)
            .node(Node::new("server", ["./httpserver", "-addr", ":8080"]).env("GODEBUG", "x"))
            .node(Node::new("client", ["a \"quoted\" \\ word"]))
            .partition(Partition::new("2s", ["server"]).until("6s").one_way(false));
        assert_eq!(
            scenario.to_toml(),
            "name = \"http-pair\"\nduration = \"20s\"\nseeds = 3\n\n[net]\n\
             delay_min = \"1ms\"\ndelay_max = \"5ms\"\nudp_loss = 0.0\n\n\
             [[node]]\nname = \"server\"\ncommand = [\"./httpserver\", \"-addr\", \":8080\"]\n\
             env = { GODEBUG = \"x\" }\n\n\
             [[node]]\nname = \"client\"\ncommand = [\"a \\\"quoted\\\" \\\\ word\"]\n\n\
             [[fault]]\nkind = \"partition\"\nat = \"2s\"\nuntil = \"6s\"\n\
             isolate = [\"server\"]\none_way = false\n"
        );
    }

    #[test]
    fn recognises_line_mentions() {
        assert!(mentions_line("TOML parse error at line 7, column 1", 7));
        assert!(mentions_line("bad.toml:7:1: unknown field", 7));
        assert!(mentions_line("error in bad.toml:7", 7));
        assert!(!mentions_line("bad.toml:17:1: unknown field", 7));
        assert!(!mentions_line("at line 71, column 2", 7));
    }
}
