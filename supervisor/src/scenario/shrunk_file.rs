//! A scenario rewritten around a fault schedule (what `shrink` leaves in
//! `shrunk.toml`): its timed `[[fault]]` entries, random or planned, are
//! replaced by the schedule's faults as planned entries at their exact
//! times, so the file needs no seeded planning to fail the same way. The
//! rest of the text, comments included, stays as written.

use std::path::Path;

use toml_edit::{value, Array, ArrayOfTables, DocumentMut, Item, Table};

use crate::scenario::plan::{self, FaultEvent, Groups};
use crate::scenario::schedule_file::PlannedFault;
use crate::scenario::Scenario;

/// The `[[fault]]` kinds that are not timed: the disk's error rates and bug
/// switches, which stay as the seed had them.
const DISK_KINDS: &[&str] = &[
    "fsync_error",
    "write_error",
    "lying_fsync",
    "lose_dir_entries",
];

/// `text` (scenario `sc`, seed `seed`) with `faults` as its only timed
/// faults, named `<name>-shrunk` (so its runs get their own artifact
/// folder) and running its nodes in `folder` (the original's folder).
pub fn rewrite(
    text: &str,
    sc: &Scenario,
    seed: u64,
    faults: &[PlannedFault],
    folder: &Path,
) -> Result<String, toml_edit::TomlError> {
    let mut doc: DocumentMut = text.parse()?;
    doc["name"] = value(format!("{}-shrunk", sc.name));
    doc["folder"] = value(folder.display().to_string());
    doc.remove("pinned");
    if let Some(rules) = doc.get_mut("faults").and_then(Item::as_table_like_mut) {
        // The schedule is this seed's subset already.
        rules.remove("swarm");
    }
    let enabled = plan::enabled_mask(&sc.faults, &sc.rules, seed);
    let mut entries = ArrayOfTables::new();
    if let Some(old) = doc.get("fault").and_then(Item::as_array_of_tables) {
        for (i, entry) in old.iter().enumerate() {
            let kind = entry.get("kind").and_then(Item::as_str).unwrap_or("");
            if DISK_KINDS.contains(&kind) && enabled.get(i).copied().unwrap_or(true) {
                entries.push(entry.clone());
            }
        }
    }
    for fault in faults {
        if let Some(entry) = entry(fault, sc.duration_ns) {
            entries.push(entry);
        }
    }
    doc.remove("fault");
    if !entries.is_empty() {
        doc.insert("fault", Item::ArrayOfTables(entries));
    }
    Ok(doc.to_string())
}

/// `fault` as the entry shrunk.toml gets, on one line
/// (`{ kind = "pause", at = "1191287490ns", node = "holder", ... }`), or
/// `None` if it gets none (see `entry`).
pub fn entry_line(fault: &PlannedFault, duration: u64) -> Option<String> {
    Some(entry(fault, duration)?.into_inline_table().to_string())
}

/// A planned `[[fault]]` entry for `fault`; `None` for what is no entry:
/// a node's `clock_offset` (kept in its `[[node]]`) and an end whose start
/// the plan dropped.
fn entry(fault: &PlannedFault, duration: u64) -> Option<Table> {
    let start = fault.events.first()?;
    let at = start.t;
    let end = fault.events.get(1).map(|e| e.t);
    let mut t = Table::new();
    t["kind"] = value(start.event.kind());
    t["at"] = value(ns(at));
    let until = |t: &mut Table| {
        if let Some(u) = end {
            t["until"] = value(ns(u));
        }
    };
    match &start.event {
        FaultEvent::Crash(node) | FaultEvent::Kill(node) | FaultEvent::Pause(node) => {
            t["node"] = value(node);
            let back = end.unwrap_or(duration.max(at + 1));
            t["down"] = value(ns(back - at));
        }
        FaultEvent::Partition {
            isolate,
            from,
            one_way,
        } => {
            until(&mut t);
            t["isolate"] = value(names(isolate));
            if let Some(from) = from {
                t["from"] = value(names(from));
            }
            t["one_way"] = value(*one_way);
        }
        FaultEvent::ClockJump(node, by) => {
            t["node"] = value(node);
            t["by"] = value(signed_ns(*by));
        }
        FaultEvent::ClockDrift(node, ppm) if *ppm != 0 => {
            until(&mut t);
            t["node"] = value(node);
            t["ppm"] = value(*ppm);
        }
        FaultEvent::Link(groups, params) => {
            until(&mut t);
            between(&mut t, groups);
            t["delay_min"] = value(ns(params.delay_min));
            t["delay_max"] = value(ns(params.delay_max));
            t["loss"] = value(params.loss);
            if params.duplicate > 0.0 {
                t["duplicate"] = value(params.duplicate);
            }
        }
        FaultEvent::Reset(groups) => between(&mut t, groups),
        FaultEvent::DiskFull(node, true) => {
            until(&mut t);
            t["node"] = value(node);
        }
        FaultEvent::Corrupt { node, path, bytes } => {
            t["node"] = value(node);
            t["path"] = value(path);
            t["bytes"] = value(i64::from(*bytes));
        }
        _ => return None,
    }
    Some(t)
}

fn between(t: &mut Table, groups: &Groups) {
    t["between"] = value(names(&groups.between));
    if let Some(and) = &groups.and {
        t["and"] = value(names(and));
    }
}

fn names(list: &[String]) -> Array {
    list.iter().map(String::as_str).collect()
}

/// A time exactly, as a scenario duration.
fn ns(t: u64) -> String {
    format!("{t}ns")
}

fn signed_ns(t: i64) -> String {
    format!("{t}ns")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::plan::Scheduled;

    fn at(t: u64, event: FaultEvent, fault: u32) -> Scheduled {
        Scheduled {
            t,
            event,
            fault: Some(fault),
        }
    }

    #[test]
    fn every_timed_kind_plans_the_same_events_again() {
        let dir = std::env::temp_dir().join(format!("shrunk-kinds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.toml");
        let text = "name = \"k\"\nduration = \"10s\"\n[[node]]\nname = \"a\"\ncommand = [\"/bin/true\"]\ndata_dir = \"/data/a\"\n[[node]]\nname = \"b\"\ncommand = [\"/bin/true\"]\n";
        std::fs::write(&file, text).unwrap();
        let sc = crate::scenario::load(&file).unwrap();
        let groups = Groups {
            between: vec!["a".into()],
            and: Some(vec!["b".into()]),
        };
        let link = vnet::LinkParams {
            delay_min: 3,
            delay_max: 9,
            loss: 0.25,
            duplicate: 0.5,
            stream_loss: 0.25,
        };
        let pairs = [
            (
                FaultEvent::Partition {
                    isolate: vec!["a".into()],
                    from: Some(vec!["b".into()]),
                    one_way: true,
                },
                Some(FaultEvent::Heal),
            ),
            (
                FaultEvent::Kill("b".into()),
                Some(FaultEvent::Restart("b".into())),
            ),
            (
                FaultEvent::ClockDrift("a".into(), -50_000),
                Some(FaultEvent::ClockDrift("a".into(), 0)),
            ),
            (
                FaultEvent::Link(groups.clone(), link),
                Some(FaultEvent::LinkNormal(groups.clone())),
            ),
            (FaultEvent::Reset(groups), None),
            (
                FaultEvent::DiskFull("a".into(), true),
                Some(FaultEvent::DiskFull("a".into(), false)),
            ),
            (
                FaultEvent::Corrupt {
                    node: "a".into(),
                    path: "wal/*.wal".into(),
                    bytes: 3,
                },
                None,
            ),
        ];
        let mut expected = Vec::new();
        let faults: Vec<PlannedFault> = pairs
            .into_iter()
            .enumerate()
            .map(|(i, (start, end))| {
                let number = i as u32 + 1;
                let t = 1_000 * u64::from(number);
                let mut events = vec![at(t, start, number)];
                events.extend(end.map(|e| at(t + 500, e, number)));
                expected.extend(events.iter().map(|e| (e.t, e.event.clone())));
                PlannedFault { number, events }
            })
            .collect();
        let out = rewrite(text, &sc, 1, &faults, &dir).unwrap();
        std::fs::write(&file, &out).unwrap();
        let again = crate::scenario::load(&file).unwrap_or_else(|e| panic!("{e}\n{out}"));
        let plan = plan::build(&again.faults, &again.rules, 1, again.duration_ns);
        let events: Vec<(u64, FaultEvent)> = plan.into_iter().map(|s| (s.t, s.event)).collect();
        expected.sort_by_key(|e| e.0);
        assert_eq!(events, expected, "{out}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn random_entries_become_the_planned_faults_and_the_rest_stays() {
        let dir = std::env::temp_dir().join(format!("shrunk-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.toml");
        let text = r#"# a comment that stays
name = "s"
duration = "10s"

[[node]]
name = "a"
command = ["/bin/true"]
clock_offset = "1s"
data_dir = "/tmp/shrunk-file-test-a"

[[node]]
name = "b"
command = ["/bin/true"]

[[fault]]
kind = "crash"
every = "1s"
min_down = "1ms"
max_down = "2ms"

[[fault]]
kind = "fsync_error"
probability = 0.5

[faults]
swarm = true
"#;
        std::fs::write(&file, text).unwrap();
        let sc = crate::scenario::load(&file).unwrap();
        // A seed whose swarm keeps the fsync_error entry.
        let seed = (0..)
            .find(|&s| plan::enabled_mask(&sc.faults, &sc.rules, s)[1])
            .unwrap();
        let faults = [
            PlannedFault {
                number: 1,
                events: vec![at(0, FaultEvent::ClockOffset("a".into(), 1), 1)],
            },
            PlannedFault {
                number: 2,
                events: vec![
                    at(1_500, FaultEvent::Pause("b".into()), 2),
                    at(2_000, FaultEvent::Resume("b".into()), 2),
                ],
            },
            PlannedFault {
                number: 3,
                events: vec![at(7, FaultEvent::ClockJump("a".into(), -9), 3)],
            },
        ];
        let out = rewrite(text, &sc, seed, &faults, Path::new("/orig")).unwrap();
        assert!(out.starts_with("# a comment that stays"), "{out}");
        assert!(!out.contains("swarm"), "{out}");
        assert!(!out.contains("every"), "{out}");
        std::fs::write(&file, &out).unwrap();
        let again = crate::scenario::load(&file).unwrap();
        assert_eq!(again.name, "s-shrunk");
        assert_eq!(again.folder.as_deref(), Some(Path::new("/orig")));
        let plan = plan::build(&again.faults, &again.rules, seed, again.duration_ns);
        let events: Vec<(u64, FaultEvent)> = plan.into_iter().map(|s| (s.t, s.event)).collect();
        assert_eq!(
            events,
            vec![
                (0, FaultEvent::ClockOffset("a".into(), 1_000_000_000)),
                (7, FaultEvent::ClockJump("a".into(), -9)),
                (1_500, FaultEvent::Pause("b".into())),
                (2_000, FaultEvent::Resume("b".into())),
            ]
        );
        assert!(matches!(
            again.faults[0],
            plan::FaultSpec::FsyncError { .. }
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
