//! A recorded fault schedule: the plan events a seed's faults.json ties to
//! its records (`planned`), read back so that `run --schedule` runs exactly
//! that plan with the random planners off, and grouped into faults (a crash
//! with its restart) so that `shrink` can leave some out and write the rest
//! as planned `[[fault]]` entries.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::scenario::plan::PlannedEvent;
use crate::scenario::plan::{FaultEvent, Groups, Scheduled};
use crate::scenario::Scenario;

/// Why a schedule file cannot be used; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// The file cannot be read.
    #[error("{file}: cannot read the fault schedule: {source}")]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not faults.json's list of records.
    #[error("{file}: not a faults.json (a JSON list of fault records): {message}")]
    Format {
        /// The file.
        file: PathBuf,
        /// The parser's words.
        message: String,
    },
    /// One record is wrong.
    #[error("{file}: entry {index} ({kind}): {message}")]
    Entry {
        /// The file.
        file: PathBuf,
        /// Its position in the list, from 0.
        index: usize,
        /// The record's kind.
        kind: String,
        /// What is wrong.
        message: String,
    },
}

/// A record of faults.json as far as the schedule needs it.
#[derive(Deserialize)]
struct Record {
    #[serde(default)]
    kind: String,
    planned: Option<serde_json::Value>,
}

/// The plan of a recorded seed, in the order it was applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    events: Vec<Scheduled>,
}

/// One fault of a schedule: its plan events (a start, and its end if any).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFault {
    /// Its number in the recorded plan.
    pub number: u32,
    /// Its events, in plan order.
    pub events: Vec<Scheduled>,
}

impl Schedule {
    /// Reads the plan of faults.json `file`, checking that every node it
    /// names is one of `sc`'s.
    pub fn read(file: &Path, sc: &Scenario) -> Result<Schedule, ScheduleError> {
        let text = std::fs::read_to_string(file).map_err(|source| ScheduleError::Read {
            file: file.to_path_buf(),
            source,
        })?;
        let records: Vec<Record> =
            serde_json::from_str(&text).map_err(|e| ScheduleError::Format {
                file: file.to_path_buf(),
                message: e.to_string(),
            })?;
        let names: Vec<&str> = sc.nodes.iter().map(|n| n.name.as_str()).collect();
        let mut events = Vec::new();
        for (index, record) in records.into_iter().enumerate() {
            let bad = |message: String| ScheduleError::Entry {
                file: file.to_path_buf(),
                index,
                kind: record.kind.clone(),
                message,
            };
            let Some(value) = &record.planned else {
                if PLAN_KINDS.contains(&record.kind.as_str()) {
                    return Err(bad(
                        "no `planned` field: written by a faultline older than `run --schedule`; run the seed again to record its plan".into(),
                    ));
                }
                continue;
            };
            let planned = PlannedEvent::deserialize(value)
                .map_err(|e| bad(format!("field `planned`: {e}")))?;
            if let Some(unknown) = planned
                .event
                .nodes()
                .into_iter()
                .find(|n| !names.contains(n))
            {
                return Err(bad(format!(
                    "node {unknown:?} is not a node of scenario {:?}",
                    sc.name
                )));
            }
            events.push(planned.scheduled());
        }
        // Stable: events of one time keep the order they were applied in.
        events.sort_by_key(|e| e.t);
        Ok(Schedule { events })
    }

    /// The plan to run.
    pub fn plan(&self) -> Vec<Scheduled> {
        self.events.clone()
    }

    /// Its faults, in the order they start.
    pub fn faults(&self) -> Vec<PlannedFault> {
        let mut faults: Vec<PlannedFault> = Vec::new();
        for e in &self.events {
            let number = e.fault.unwrap_or(0);
            match faults.iter_mut().find(|f| f.number == number) {
                Some(f) => f.events.push(e.clone()),
                None => faults.push(PlannedFault {
                    number,
                    events: vec![e.clone()],
                }),
            }
        }
        faults
    }

    /// The schedule with only the faults numbered in `keep`.
    pub fn only(&self, keep: &[u32]) -> Schedule {
        Schedule {
            events: self
                .events
                .iter()
                .filter(|e| e.fault.is_some_and(|f| keep.contains(&f)))
                .cloned()
                .collect(),
        }
    }
}

impl PlannedFault {
    /// A node's setting rather than a fault (`clock_offset`): always kept.
    pub fn is_setting(&self) -> bool {
        self.events
            .iter()
            .all(|e| matches!(e.event, FaultEvent::ClockOffset(..)))
    }

    /// In words: `#3 crash kv at 1.500000000s, until 1.700000000s`.
    pub fn describe(&self) -> String {
        let secs = |t: u64| format!("{:.9}s", t as f64 / 1e9);
        let mut words = format!("#{}", self.number);
        for (i, e) in self.events.iter().enumerate() {
            let what = match (&e.event, e.event.node()) {
                (FaultEvent::Partition { isolate, .. }, _) => {
                    format!("partition {}", isolate.join(","))
                }
                (event, Some(node)) => format!("{} {node}", event.kind()),
                (event, None) => event.kind().to_string(),
            };
            let sep = if i == 0 { " " } else { ", then " };
            words.push_str(&format!("{sep}{what} at {}", secs(e.t)));
        }
        words
    }
}

/// The record kinds a plan event makes first: a faults.json with one of
/// them but no `planned` field predates recorded plans.
const PLAN_KINDS: &[&str] = &[
    "crash",
    "kill",
    "pause",
    "partition",
    "clock_jump",
    "clock_offset",
    "clock_drift",
    "link",
    "reset",
    "disk_full",
    "corrupt",
];

impl FaultEvent {
    /// Its kind, as the scenario and faults.json name it.
    pub fn kind(&self) -> &'static str {
        match self {
            FaultEvent::Partition { .. } => "partition",
            FaultEvent::Heal => "heal",
            FaultEvent::Crash(_) => "crash",
            FaultEvent::Kill(_) => "kill",
            FaultEvent::Restart(_) => "restart",
            FaultEvent::Reboot(_) => "reboot",
            FaultEvent::Pause(_) => "pause",
            FaultEvent::Resume(_) => "resume",
            FaultEvent::ClockJump(..) => "clock_jump",
            FaultEvent::ClockOffset(..) => "clock_offset",
            FaultEvent::ClockDrift(..) => "clock_drift",
            FaultEvent::Link(..) => "link",
            FaultEvent::LinkNormal(_) => "link_normal",
            FaultEvent::Reset(_) => "reset",
            FaultEvent::DiskFull(..) => "disk_full",
            FaultEvent::Corrupt { .. } => "corrupt",
        }
    }

    /// The one node it acts on, if it names one.
    pub fn node(&self) -> Option<&str> {
        match self {
            FaultEvent::Crash(n)
            | FaultEvent::Kill(n)
            | FaultEvent::Restart(n)
            | FaultEvent::Reboot(n)
            | FaultEvent::Pause(n)
            | FaultEvent::Resume(n)
            | FaultEvent::ClockJump(n, _)
            | FaultEvent::ClockOffset(n, _)
            | FaultEvent::ClockDrift(n, _)
            | FaultEvent::DiskFull(n, _)
            | FaultEvent::Corrupt { node: n, .. } => Some(n),
            _ => None,
        }
    }

    /// Every node it names.
    fn nodes(&self) -> Vec<&str> {
        fn groups(g: &Groups) -> Vec<&str> {
            g.between
                .iter()
                .chain(g.and.iter().flatten())
                .map(String::as_str)
                .collect()
        }
        match self {
            FaultEvent::Partition { isolate, from, .. } => isolate
                .iter()
                .chain(from.iter().flatten())
                .map(String::as_str)
                .collect(),
            FaultEvent::Link(g, _) | FaultEvent::LinkNormal(g) | FaultEvent::Reset(g) => groups(g),
            other => other.node().into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(dir: &Path) -> Scenario {
        let file = dir.join("s.toml");
        std::fs::write(
            &file,
            "name = \"s\"\nduration = \"10s\"\n[[node]]\nname = \"a\"\ncommand = [\"/bin/true\"]\n",
        )
        .unwrap();
        crate::scenario::load(&file).unwrap()
    }

    fn folder(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("schedule-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn reads_the_planned_records_in_order_and_groups_faults() {
        let dir = folder("read");
        let sc = scenario(&dir);
        let file = dir.join("faults.json");
        std::fs::write(
            &file,
            r#"[
 {"t":5,"event":1,"kind":"crash","node":"a","detail":"","planned":{"fault":1,"at":5,"event":{"kind":"crash","args":"a"}}},
 {"t":5,"event":2,"kind":"disk_crash","node":"a","detail":""},
 {"t":9,"event":3,"kind":"restart","node":"a","detail":"","planned":{"fault":1,"at":8,"event":{"kind":"restart","args":"a"}}},
 {"t":9,"event":4,"kind":"clock_jump","node":"a","detail":"","planned":{"fault":2,"at":9,"event":{"kind":"clock_jump","args":["a",-7]}}}
]"#,
        )
        .unwrap();
        let s = Schedule::read(&file, &sc).unwrap();
        let plan = s.plan();
        assert_eq!(plan.len(), 3);
        assert_eq!(plan[1].t, 8, "the planned time, not the record's");
        assert_eq!(plan[2].event, FaultEvent::ClockJump("a".into(), -7));
        let faults = s.faults();
        assert_eq!(faults.len(), 2);
        assert_eq!(faults[0].events.len(), 2);
        assert_eq!(s.only(&[2]).plan(), vec![plan[2].clone()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_event_keeps_its_parameters_through_faults_json() {
        let groups = Groups {
            between: vec!["a".into()],
            and: Some(vec!["b".into()]),
        };
        let events = [
            FaultEvent::Partition {
                isolate: vec!["a".into()],
                from: Some(vec!["b".into()]),
                one_way: true,
            },
            FaultEvent::Heal,
            FaultEvent::Crash("a".into()),
            FaultEvent::Kill("a".into()),
            FaultEvent::Restart("a".into()),
            FaultEvent::Pause("a".into()),
            FaultEvent::Resume("a".into()),
            FaultEvent::ClockJump("a".into(), -2_000_000_001),
            FaultEvent::ClockOffset("a".into(), 7),
            FaultEvent::ClockDrift("a".into(), -50_000),
            FaultEvent::Link(
                groups.clone(),
                vnet::LinkParams {
                    delay_min: 3,
                    delay_max: 9,
                    loss: 0.25,
                    duplicate: 0.5,
                    stream_loss: 0.25,
                },
            ),
            FaultEvent::LinkNormal(groups.clone()),
            FaultEvent::Reset(groups),
            FaultEvent::DiskFull("a".into(), true),
            FaultEvent::Corrupt {
                node: "a".into(),
                path: "wal/*.wal".into(),
                bytes: 3,
            },
        ];
        for (i, event) in events.into_iter().enumerate() {
            let planned = PlannedEvent {
                fault: i as u32,
                at: 1_000 + i as u64,
                event,
            };
            let json = serde_json::to_value(&planned).unwrap();
            assert_eq!(json["event"]["kind"], planned.event.kind(), "{json}");
            let back = PlannedEvent::deserialize(&json).unwrap();
            assert_eq!(back, planned, "{json}");
        }
    }

    #[test]
    fn errors_name_the_file_and_the_entry() {
        let dir = folder("errors");
        let sc = scenario(&dir);
        let file = dir.join("faults.json");
        let err = |text: &str| {
            std::fs::write(&file, text).unwrap();
            Schedule::read(&file, &sc).unwrap_err().to_string()
        };
        let missing = Schedule::read(&dir.join("none.json"), &sc)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("none.json: cannot read"), "{missing}");
        assert!(err("{}").contains("faults.json: not a faults.json"));
        let old = err(r#"[{"t":1,"event":1,"kind":"crash","node":"a","detail":""}]"#);
        assert!(old.contains("entry 0 (crash): no `planned` field"), "{old}");
        let node = err(
            r#"[{"kind":"pause","planned":{"fault":1,"at":1,"event":{"kind":"pause","args":"zz"}}}]"#,
        );
        assert!(
            node.contains("entry 0 (pause): node \"zz\" is not a node"),
            "{node}"
        );
        let shape = err(r#"[{"kind":"pause","planned":{"fault":1,"at":1}}]"#);
        assert!(
            shape.contains("entry 0 (pause): field `planned`:"),
            "{shape}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
