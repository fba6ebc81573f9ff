//! The Claude Code plugin cannot rot.
//!
//! `integrations/claude-code/` is a marketplace (`.claude-plugin/marketplace.json`)
//! holding one plugin, `faultline/` (`.claude-plugin/plugin.json`, a skill, an
//! agent and two commands). The manifests must be JSON with the fields Claude
//! Code requires, every path they name must exist, the plugin's version and
//! license must be the workspace's (Claude Code updates an installed plugin
//! when its version changes), and every markdown file must open with front
//! matter holding the keys its kind needs.
//!
//! Every `$ command    # exit N` line of the skill, the agent and the commands
//! runs, in that order, against real runs of docs/examples/kv.toml in a
//! scratch directory (`faultline` on the PATH, `$RUNS` the artifacts
//! directory, `$DIR` the first failing seed's directory), and must exit with
//! N. The skill's own run finds the failing seed; its replay, and the replay
//! command's, must say `replay identical` (exit 1), so the seed runs three
//! times with one trace hash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use faultline_e2e::console::ConsoleSession;
use faultline_e2e::paths::{faultline_bin, workspace_root};

/// The marketplace's directory (the one holding `.claude-plugin/`).
fn marketplace_root() -> PathBuf {
    workspace_root().join("integrations/claude-code")
}

/// The plugin's directory.
fn plugin_root() -> PathBuf {
    marketplace_root().join("faultline")
}

/// The files issue 22 names, relative to the plugin's directory, in the
/// order their commands run, with how many commands each shows at least.
const COMPONENTS: [(&str, usize); 4] = [
    ("skills/faultline/SKILL.md", 11),
    ("agents/faultline-triage.md", 6),
    ("commands/replay.md", 2),
    ("commands/pin.md", 2),
];

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path))
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", path.display()))
}

/// The non-empty string at `key` of `v`.
fn text<'a>(v: &'a serde_json::Value, key: &str, file: &Path) -> &'a str {
    match v[key].as_str() {
        Some(s) if !s.trim().is_empty() => s,
        _ => panic!("{}: `{key}` must be a non-empty string", file.display()),
    }
}

/// A name Claude Code accepts for a marketplace, plugin, skill or agent.
fn assert_kebab(name: &str, file: &Path) {
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.starts_with('-'),
        "{}: `{name}` is not a lowercase kebab-case name",
        file.display()
    );
}

/// Every string in `v` that is a relative path (`./...`), as found.
fn relative_paths(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) if s.starts_with("./") => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|i| relative_paths(i, out)),
        serde_json::Value::Object(map) => map.values().for_each(|i| relative_paths(i, out)),
        _ => {}
    }
}

/// The top-level keys of the YAML front matter a markdown file opens with.
/// The plugin's front matter is flat `key: plain scalar` lines; a value that
/// YAML would not read as one plain string fails here.
fn front_matter(path: &Path) -> BTreeMap<String, String> {
    let text = read(path);
    let body = text
        .strip_prefix("---\n")
        .unwrap_or_else(|| panic!("{} does not open with `---` front matter", path.display()));
    let (block, _) = body
        .split_once("\n---\n")
        .unwrap_or_else(|| panic!("{}: the front matter is never closed", path.display()));
    let mut keys = BTreeMap::new();
    for line in block.lines() {
        let (key, value) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("{}: `{line}` is not `key: value`", path.display()));
        let value = value.trim();
        assert!(
            !value.contains(": ") && !value.contains(" #"),
            "{}: the value of `{key}` holds `: ` or ` #`, which YAML reads differently",
            path.display()
        );
        assert!(
            !value.starts_with(|c: char| "`@&*!|>%'\"[]{},#?-".contains(c)),
            "{}: the value of `{key}` starts with a YAML indicator",
            path.display()
        );
        let old = keys.insert(key.to_string(), value.to_string());
        assert!(old.is_none(), "{}: `{key}` twice", path.display());
    }
    keys
}

/// `path` holds front matter with non-empty `required` keys; returns it.
fn assert_front_matter(path: &Path, required: &[&str]) -> BTreeMap<String, String> {
    let keys = front_matter(path);
    for key in required {
        assert!(
            keys.get(*key).is_some_and(|v| !v.is_empty()),
            "{}: front matter lacks `{key}`",
            path.display()
        );
    }
    keys
}

/// The markdown files directly in `dir`, or in its subdirectories as `SKILL.md`.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.push(path.join("SKILL.md"));
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn manifests_are_valid_and_name_only_existing_paths() {
    let market_file = marketplace_root().join(".claude-plugin/marketplace.json");
    let market = json(&market_file);
    assert_kebab(text(&market, "name", &market_file), &market_file);
    text(&market["owner"], "name", &market_file);
    let plugins = market["plugins"]
        .as_array()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| panic!("{}: `plugins` lists none", market_file.display()));
    let mut sources = Vec::new();
    for entry in plugins {
        let name = text(entry, "name", &market_file);
        let source = text(entry, "source", &market_file);
        let dir = marketplace_root().join(
            source
                .strip_prefix("./")
                .unwrap_or_else(|| panic!("plugin {name}: source `{source}` is not `./...`")),
        );
        let manifest_file = dir.join(".claude-plugin/plugin.json");
        assert!(
            manifest_file.is_file(),
            "plugin {name}: {} does not exist",
            manifest_file.display()
        );
        assert_eq!(
            text(&json(&manifest_file), "name", &manifest_file),
            name,
            "the marketplace entry and plugin.json name the plugin differently"
        );
        sources.push(dir);
    }
    assert_eq!(sources, [plugin_root()], "one plugin, faultline/");

    let manifest_file = plugin_root().join(".claude-plugin/plugin.json");
    let manifest = json(&manifest_file);
    let name = text(&manifest, "name", &manifest_file);
    assert_kebab(name, &manifest_file);
    text(&manifest, "description", &manifest_file);
    assert_eq!(
        text(&manifest, "version", &manifest_file),
        env!("CARGO_PKG_VERSION"),
        "the plugin's version is faultline's: bump both together"
    );
    assert_eq!(
        text(&manifest, "license", &manifest_file),
        env!("CARGO_PKG_LICENSE")
    );
    let mut paths = Vec::new();
    relative_paths(&manifest, &mut paths);
    for path in paths {
        assert!(
            plugin_root().join(&path).exists(),
            "{} names {path}, which does not exist",
            manifest_file.display()
        );
    }

    for (component, _) in COMPONENTS {
        assert!(
            plugin_root().join(component).is_file(),
            "{component} is missing"
        );
    }
    let skills = markdown_files(&plugin_root().join("skills"));
    for skill in &skills {
        let keys = assert_front_matter(skill, &["name", "description"]);
        let dir = skill.parent().unwrap().file_name().unwrap();
        assert_eq!(
            keys["name"],
            dir.to_string_lossy(),
            "a skill's name is its directory's"
        );
        assert_kebab(&keys["name"], skill);
    }
    let agents = markdown_files(&plugin_root().join("agents"));
    for agent in &agents {
        let keys = assert_front_matter(agent, &["name", "description", "tools"]);
        let stem = agent.file_stem().unwrap();
        assert_eq!(
            keys["name"],
            stem.to_string_lossy(),
            "an agent's name is its file's"
        );
        assert_kebab(&keys["name"], agent);
    }
    let commands = markdown_files(&plugin_root().join("commands"));
    for command in &commands {
        let keys = assert_front_matter(command, &["description", "argument-hint", "allowed-tools"]);
        assert_eq!(keys["argument-hint"], "DIR", "{}", command.display());
    }
    assert_eq!(
        skills.len() + agents.len() + commands.len(),
        COMPONENTS.len()
    );

    let market_name = text(&market, "name", &market_file);
    for doc in ["README.md", "docs/agents.md"] {
        let text = read(&workspace_root().join(doc));
        for step in [
            "/plugin marketplace add ".to_string(),
            format!("/plugin install {name}@{market_name}"),
            format!("/plugin marketplace update {market_name}"),
        ] {
            assert!(text.contains(&step), "{doc} does not say `{step}`");
        }
    }
}

#[test]
fn every_plugin_command_runs_and_exits_as_documented() {
    let mut session = ConsoleSession::new("plugin", "runs");
    let runs = session.root().join("runs");
    let bin_dir = faultline_bin().parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    session.env("PATH", path).env("RUNS", &runs);
    for (component, at_least) in COMPONENTS {
        let file = plugin_root().join(component);
        session.run_markdown(component, &read(&file), at_least);
    }
    let report = json(&session.failing_dir().join("report.json"));
    assert_eq!(
        report["pass"], false,
        "the recorded run is the failing seed"
    );
    let scenario = read(&session.root().join("docs/examples/kv.toml"));
    assert_eq!(
        scenario.matches("[[pinned]]").count(),
        1,
        "the skill and /faultline:pin pin the seed once:\n{scenario}"
    );
}
