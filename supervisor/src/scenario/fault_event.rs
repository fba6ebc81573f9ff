//! The events of a seed's fault plan: what the supervisor does at a planned
//! time, as faults.json records it and `run --schedule` reads it back.

use serde::{Deserialize, Serialize};

use super::fault_spec::Groups;

/// Something the supervisor does at a planned time. Serialized (as
/// `{"kind": "crash", "args": "n1"}`) into faults.json, so a recorded plan
/// can be run again (`run --schedule`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "args", rename_all = "snake_case")]
pub enum FaultEvent {
    /// Cut these hosts off from all others.
    Partition {
        /// The isolated hosts.
        isolate: Vec<String>,
        /// The hosts they are cut off from (`None`: all others).
        from: Option<Vec<String>>,
        /// Only their outgoing traffic is dropped.
        one_way: bool,
    },
    /// Restore every link.
    Heal,
    /// Kill every process of the node (SIGKILL) and apply its disk's crash model.
    Crash(String),
    /// Kill every process of the node (SIGKILL); its disk keeps the page cache.
    Kill(String),
    /// Start the node's command again on its surviving disk.
    Restart(String),
    /// The node's machine reboots after its program exited by itself
    /// (`reboot_on_exit`): what the disk never made durable is gone.
    Reboot(String),
    /// Stop scheduling the node's threads.
    Pause(String),
    /// Schedule them again.
    Resume(String),
    /// Step the node's wall clock by signed ns.
    ClockJump(String, i64),
    /// Set the node's wall clock offset at the start of the run.
    ClockOffset(String, i64),
    /// The node's clocks run at this ppm from now on (0: true rate).
    ClockDrift(String, i64),
    /// The links between the groups get these conditions.
    Link(Groups, vnet::LinkParams),
    /// The links between the groups return to the scenario's `[net]`.
    LinkNormal(Groups),
    /// Reset every TCP connection between the groups.
    Reset(Groups),
    /// The node's disk fills (true) or has space again (false).
    DiskFull(String, bool),
    /// Flip bytes of synced data in the node's files matching the glob.
    Corrupt {
        /// Which node.
        node: String,
        /// The glob, relative to the data_dir.
        path: String,
        /// How many bytes.
        bytes: u32,
    },
}

impl FaultEvent {
    /// True for events that end a fault (they still happen in the quiet period).
    pub(super) fn ends_fault(&self) -> bool {
        matches!(
            self,
            FaultEvent::Heal
                | FaultEvent::Restart(_)
                | FaultEvent::Resume(_)
                | FaultEvent::LinkNormal(_)
                | FaultEvent::DiskFull(_, false)
                | FaultEvent::ClockDrift(_, 0)
        )
    }
}

/// An event of a seed's plan: when, what, and which fault it belongs to
/// (a crash and its restart share one), so a recorded plan can be run
/// again whole or with faults left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled {
    /// Virtual ns.
    pub t: u64,
    /// What happens.
    pub event: FaultEvent,
    /// The fault's number in the plan; `None` for events the run adds
    /// itself (the restart of a node with `restart_on_exit`).
    pub fault: Option<u32>,
}

/// A plan event as faults.json records it: enough to plan it again exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedEvent {
    /// The fault it belongs to (a crash and its restart share the number).
    pub fault: u32,
    /// When it was planned (virtual ns): the record's `t` may be a step later.
    pub at: u64,
    /// What it does, with every parameter.
    pub event: FaultEvent,
}

impl PlannedEvent {
    /// The plan entry again.
    pub fn scheduled(&self) -> Scheduled {
        Scheduled {
            t: self.at,
            event: self.event.clone(),
            fault: Some(self.fault),
        }
    }
}
