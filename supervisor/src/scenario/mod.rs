//! Scenario files (TOML): the nodes of a simulated cluster, the network, the
//! planned faults and how long a seed runs. Every error names the file, the
//! line and column, and the field.

pub mod bytes;
pub mod check;
pub mod disk;
pub mod duration;
pub mod error;
mod fault_event;
mod fault_spec;
mod faults;
pub mod invariant;
pub mod plan;
mod rules;
pub mod schedule_file;
pub mod shrunk_file;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::host::launch;
use crate::scenario::error::Problem;
pub use crate::scenario::error::ScenarioError;
use crate::scenario::invariant::{InvariantSpec, RawInvariant};
use crate::scenario::plan::{FaultSpec, PlanRules};

/// A scenario as written in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: Spanned<String>,
    duration: Spanned<String>,
    seeds: Option<u64>,
    folder: Option<Spanned<String>>,
    #[serde(default)]
    net: NetSection,
    #[serde(rename = "node", default)]
    nodes: Vec<Node>,
    #[serde(rename = "fault", default)]
    faults: Vec<faults::Fault>,
    #[serde(rename = "faults", default)]
    rules: rules::FaultsSection,
    #[serde(default)]
    check: check::CheckSection,
    #[serde(default)]
    disk: disk::DiskSection,
    #[serde(rename = "pinned", default)]
    pinned: Vec<Pinned>,
    #[serde(rename = "invariant", default)]
    invariants: Vec<RawInvariant>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pinned {
    seed: Spanned<String>,
    #[serde(default)]
    note: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetSection {
    delay_min: Option<Spanned<String>>,
    delay_max: Option<Spanned<String>>,
    udp_loss: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Node {
    name: Spanned<String>,
    command: Spanned<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    data_dir: Option<Spanned<String>>,
    #[serde(default)]
    restart_on_exit: bool,
    #[serde(default)]
    reboot_on_exit: bool,
    restart_delay: Option<Spanned<String>>,
    clock_offset: Option<Spanned<String>>,
}

/// A node ready to launch.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// Its name, which is also its host name.
    pub name: String,
    /// The resolved program.
    pub program: PathBuf,
    /// The program as the node's launch names it: as written when relative
    /// to the file's folder (the node runs there, so neither the trace nor
    /// argv[0] depends on where faultline was started), else `program`.
    pub command0: String,
    /// argv[1..].
    pub args: Vec<String>,
    /// Variables added to the base environment.
    pub env: BTreeMap<String, String>,
    /// Where the node sees its simulated disk (an absolute path).
    pub data_dir: Option<PathBuf>,
    /// Restart the node this long after it exits by itself, like a service
    /// manager would (its exits then do not fail the seed).
    pub restart_on_exit: Option<u64>,
    /// Before that restart, the node's machine reboots: its disk loses what
    /// was never made durable (the page cache is gone).
    pub reboot_on_exit: bool,
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The scenario's name (seeds and artifact paths derive from it).
    pub name: String,
    /// Virtual nanoseconds each seed runs.
    pub duration_ns: u64,
    /// Seeds to run when the command line does not say.
    pub seeds: u64,
    /// The network settings.
    pub net: vnet::NetConfig,
    /// The nodes, in file order (host addresses follow it).
    pub nodes: Vec<NodeSpec>,
    /// The fault plan's entries (turned into events per seed).
    pub faults: Vec<FaultSpec>,
    /// The `[faults]` rules over all entries.
    pub rules: PlanRules,
    /// The `[check]` section: stderr patterns, checker, liveness.
    pub check: check::CheckSpec,
    /// The `[disk]` settings of every node's simulated disk.
    pub disk: disk::DiskSpec,
    /// Seeds pinned as regressions, with their notes: they run first, every time.
    pub pinned: Vec<(u64, String)>,
    /// Probes run during the seed, each on a host of its own after the nodes'.
    pub invariants: Vec<InvariantSpec>,
    /// `folder`: where relative commands resolve and nodes run, when not
    /// the file's own folder (a shrunk copy written next to a seed's
    /// artifacts runs the original's programs where they ran).
    pub folder: Option<PathBuf>,
}

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
    /// The scenario file's directory: relative commands resolve against it.
    dir: &'a Path,
}

impl Ctx<'_> {
    /// `problem` at `span` of the file, as line and column.
    fn at(&self, span: Range<usize>, problem: Problem) -> ScenarioError {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        ScenarioError::At {
            file: self.file.to_path_buf(),
            line,
            column,
            problem: Box::new(problem),
        }
    }

    /// The value of duration field `field`, as nanoseconds.
    fn duration(&self, field: &str, v: &Spanned<String>) -> Result<u64, ScenarioError> {
        duration::parse_ns(v.get_ref()).map_err(|source| {
            let field = field.to_string();
            self.at(v.span(), Problem::Duration { field, source })
        })
    }

    /// A `command` list resolved: the program (relative to the file's
    /// folder, or on PATH), the word the launch names it by (as written when
    /// relative to the folder, where the program runs, so neither the trace
    /// nor argv[0] depends on where faultline was started), and the arguments.
    fn command(
        &self,
        command: &Spanned<Vec<String>>,
        owner: &str,
    ) -> Result<(PathBuf, String, Vec<String>), ScenarioError> {
        let Some((program, args)) = command.get_ref().split_first() else {
            return Err(self.at(
                command.span(),
                Problem::Rule("field `command`: must name a program"),
            ));
        };
        let relative = program.contains('/') && !Path::new(program).is_absolute();
        let located = if relative {
            self.dir.join(program).display().to_string()
        } else {
            program.clone()
        };
        let resolved = launch::resolve_program(&located).map_err(|source| {
            let owner = owner.to_string();
            self.at(command.span(), Problem::Program { owner, source })
        })?;
        let command0 = if relative {
            program.clone()
        } else {
            resolved.display().to_string()
        };
        Ok((resolved, command0, args.to_vec()))
    }
}

/// Reads and validates a scenario file; paths in node commands resolve
/// against the file's directory, bare names on PATH.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        file: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Validates scenario `text` as if it were the file `path` (a seed's copy of
/// the file it ran: its commands still resolve against `path`'s directory).
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let text = text.to_string();
    let dir = path.parent().unwrap_or(Path::new("."));
    let ctx = Ctx {
        file: path,
        text: &text,
        dir,
    };
    let raw: File =
        toml::from_str(&text).map_err(|e| ctx.at(e.span().unwrap_or(0..0), Problem::Toml(e)))?;
    let folder = match &raw.folder {
        Some(f) if !f.get_ref().starts_with('/') => {
            return Err(ctx.at(
                f.span(),
                Problem::Rule("field `folder`: must be an absolute path"),
            ));
        }
        Some(f) => Some(PathBuf::from(f.get_ref())),
        None => None,
    };
    let ctx = Ctx {
        dir: folder.as_deref().unwrap_or(dir),
        ..ctx
    };
    let duration_ns = ctx.duration("duration", &raw.duration)?;
    if duration_ns == 0 {
        return Err(ctx.at(
            raw.duration.span(),
            Problem::Rule(
                "field `duration`: a seed of 0s runs nothing; give a virtual time such as \"30s\"",
            ),
        ));
    }
    if raw.name.get_ref().is_empty() {
        return Err(ctx.at(
            raw.name.span(),
            Problem::Rule("field `name`: must not be empty"),
        ));
    }
    let mut net = vnet::NetConfig::default();
    if let Some(v) = &raw.net.delay_min {
        net.link.delay_min = ctx.duration("net.delay_min", v)?;
    }
    if let Some(v) = &raw.net.delay_max {
        net.link.delay_max = ctx.duration("net.delay_max", v)?;
    }
    if let Some(loss) = raw.net.udp_loss {
        net.link.loss = loss;
    }
    net.validate().map_err(|e| ctx.at(0..0, Problem::Net(e)))?;
    if raw.nodes.is_empty() {
        return Err(ctx.at(
            0..0,
            Problem::Rule("no [[node]]: a scenario needs at least one"),
        ));
    }
    let mut nodes = Vec::new();
    for node in &raw.nodes {
        let name = node.name.get_ref().clone();
        if nodes.iter().any(|n: &NodeSpec| n.name == name) {
            return Err(ctx.at(node.name.span(), Problem::Twice { what: "node", name }));
        }
        let (program, command0, args) = ctx.command(&node.command, &format!("node {name:?}"))?;
        let data_dir = match &node.data_dir {
            Some(d) if !d.get_ref().starts_with('/') => {
                return Err(ctx.at(d.span(), Problem::DataDir(name)));
            }
            Some(d) => Some(PathBuf::from(d.get_ref())),
            None => None,
        };
        let delay = match &node.restart_delay {
            Some(d) => ctx.duration("restart_delay", d)?,
            None => 100_000_000,
        };
        nodes.push(NodeSpec {
            name,
            program,
            command0,
            args,
            env: node.env.clone(),
            data_dir,
            restart_on_exit: (node.restart_on_exit || node.reboot_on_exit).then_some(delay),
            reboot_on_exit: node.reboot_on_exit,
        });
    }
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    let disks: Vec<String> = nodes
        .iter()
        .filter(|n| n.data_dir.is_some())
        .map(|n| n.name.clone())
        .collect();
    let mut faults = raw
        .faults
        .iter()
        .map(|f| faults::fault_spec(&ctx, f, &names, &disks))
        .collect::<Result<Vec<_>, _>>()?;
    for node in &raw.nodes {
        if let Some(v) = &node.clock_offset {
            let by = duration::parse_signed_ns(v.get_ref()).map_err(|source| {
                let field = "clock_offset".to_string();
                ctx.at(v.span(), Problem::Duration { field, source })
            })?;
            faults.push(FaultSpec::ClockOffset {
                node: node.name.get_ref().clone(),
                by,
            });
        }
    }
    let rules = rules::rules(&ctx, &raw.rules, &faults, duration_ns)?;
    let invariants = invariant::specs(&ctx, &raw.invariants, &names)?;
    let pinned = raw
        .pinned
        .iter()
        .map(|p| {
            crate::sim::seeds::parse_seed(p.seed.get_ref())
                .map(|s| (s, p.note.clone()))
                .map_err(|e| ctx.at(p.seed.span(), Problem::PinnedSeed(e)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let check = check::spec(&ctx, &raw.check, rules.quiet)?;
    let disk = disk::spec(&ctx, &raw.disk)?;
    Ok(Scenario {
        disk,
        check,
        pinned,
        invariants,
        name: raw.name.into_inner(),
        duration_ns,
        seeds: raw.seeds.unwrap_or(1),
        net,
        nodes,
        faults,
        rules,
        folder,
    })
}

/// The base of a scenario's own seeds: its name's hash, so every machine
/// derives the same seeds.
pub fn name_base(name: &str) -> u64 {
    crate::sim::trace::hash_bytes(name.as_bytes())
}

/// The i-th seed from a base (the scenario's name's, or an `--explore` one).
pub fn seed_from(base: u64, i: u64) -> u64 {
    let mut z = base.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    // splitmix64 finalizer: neighbouring indices give unrelated seeds.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
