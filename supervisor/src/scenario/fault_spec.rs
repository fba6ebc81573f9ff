//! What a scenario's `[[fault]]` entries and `[faults]` rules say, parsed
//! and checked (`faults.rs`, `rules.rs`), before `plan` turns them into a
//! seed's events.

use serde::{Deserialize, Serialize};

use super::fault_event::FaultEvent;

/// How a node is taken down for a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// SIGKILL of its processes and a power cut of its disk (the crash model).
    Crash,
    /// SIGKILL of its processes only: the machine and its page cache survive.
    Kill,
    /// Its processes are not scheduled (a GC pause, a VM freeze), then go on.
    Pause,
}

impl Outage {
    /// The scenario's name of the kind.
    pub fn name(self) -> &'static str {
        match self {
            Outage::Crash => "crash",
            Outage::Kill => "kill",
            Outage::Pause => "pause",
        }
    }

    pub(super) fn start(self, node: &str) -> FaultEvent {
        let node = node.to_string();
        match self {
            Outage::Crash => FaultEvent::Crash(node),
            Outage::Kill => FaultEvent::Kill(node),
            Outage::Pause => FaultEvent::Pause(node),
        }
    }

    pub(super) fn end(self, node: &str) -> FaultEvent {
        let node = node.to_string();
        match self {
            Outage::Crash | Outage::Kill => FaultEvent::Restart(node),
            Outage::Pause => FaultEvent::Resume(node),
        }
    }
}

/// Two groups of hosts: the links between them are what a fault touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Groups {
    /// One side.
    pub between: Vec<String>,
    /// The other side (`None`: every host not in `between`).
    pub and: Option<Vec<String>>,
}

/// The `[faults]` section: rules over all entries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanRules {
    /// Most nodes crashed, killed or paused at once, over all entries.
    pub max_down: Option<usize>,
    /// The last this-many ns of a seed: no new faults, everything healed.
    pub quiet: Option<u64>,
    /// Each seed enables a seeded subset of the entries.
    pub swarm: bool,
}

/// One `[[fault]]` entry of a scenario, validated.
#[derive(Debug, Clone)]
pub enum FaultSpec {
    /// Cut hosts off at `at`, heal at `until`.
    Partition {
        /// Start, virtual ns.
        at: u64,
        /// Heal time, if any.
        until: Option<u64>,
        /// The hosts cut off from the rest.
        isolate: Vec<String>,
        /// Cut them off only from these hosts (default: from all others).
        from: Option<Vec<String>>,
        /// Drop only traffic from the isolated hosts.
        one_way: bool,
    },
    /// Take `node` down (crash, kill or pause) at `at`, for `down`.
    OutageAt {
        /// Crash, kill or pause.
        kind: Outage,
        /// When.
        at: u64,
        /// Which node.
        node: String,
        /// How long it stays down.
        down: u64,
    },
    /// fsync/fdatasync on the nodes' disks fail with EIO with this
    /// probability (the dirty data is dropped, as on Linux).
    FsyncError {
        /// Chance per call.
        probability: f64,
        /// The nodes whose disks misbehave.
        nodes: Vec<String>,
    },
    /// Bug switches in the nodes' disks: fsync that reports success but
    /// persists nothing, and/or a directory whose entries a crash drops.
    DiskBug {
        /// fsync lies.
        lying_fsync: bool,
        /// A directory (relative to the data_dir) that loses its entries on crash.
        lose_dir_entries: Option<std::path::PathBuf>,
        /// The nodes whose disks misbehave.
        nodes: Vec<String>,
    },
    /// Writes to the nodes' disks fail with `errno` (ENOSPC or EIO) with this
    /// probability.
    WriteError {
        /// Chance per write.
        probability: f64,
        /// ENOSPC (28) or EIO (5).
        errno: i32,
        /// The nodes whose disks misbehave.
        nodes: Vec<String>,
    },
    /// Random outages: on average one every `every`, each node down for a
    /// seeded time in [min_down, max_down], at most `max_down_nodes` down at
    /// once, starting within [from, until).
    OutageRandom {
        /// Crash, kill or pause.
        kind: Outage,
        /// Mean interval between outages.
        every: u64,
        /// Shortest down time.
        min_down: u64,
        /// Longest down time.
        max_down: u64,
        /// Most nodes down at the same time.
        max_down_nodes: usize,
        /// The nodes that may go down.
        nodes: Vec<String>,
        /// Outages start at or after this time.
        from: u64,
        /// ... and before this one (default: the end of the seed).
        until: Option<u64>,
    },
    /// The node's wall clock steps by `by` ns at `at` (negative: backwards).
    ClockJump {
        /// When.
        at: u64,
        /// Which node.
        node: String,
        /// Signed ns.
        by: i64,
    },
    /// Random wall-clock steps: on average one every `every`, on one of
    /// `nodes`, by a seeded amount in [-max_by, max_by].
    ClockJumpRandom {
        /// Mean interval.
        every: u64,
        /// The nodes whose clocks may step.
        nodes: Vec<String>,
        /// Largest step (ns).
        max_by: u64,
    },
    /// The node's clocks run fast or slow by `ppm` from `at` until `until`.
    ClockDrift {
        /// Which node.
        node: String,
        /// Parts per million (negative: slow).
        ppm: i64,
        /// Start.
        at: u64,
        /// End, if any.
        until: Option<u64>,
    },
    /// The node's wall clock starts `by` ns away from the others (a node's
    /// `clock_offset`).
    ClockOffset {
        /// Which node.
        node: String,
        /// Signed ns.
        by: i64,
    },
    /// The links between two groups get their own delay and loss for a window.
    Link {
        /// The hosts whose links change.
        groups: Groups,
        /// Start.
        at: u64,
        /// End, if any.
        until: Option<u64>,
        /// The conditions.
        params: vnet::LinkParams,
    },
    /// Every TCP connection between the groups is reset at `at`.
    Reset {
        /// The hosts whose connections break.
        groups: Groups,
        /// When.
        at: u64,
    },
    /// The node's disk is full (writes fail with ENOSPC) from `at` until `until`.
    DiskFull {
        /// Which node.
        node: String,
        /// Start.
        at: u64,
        /// End, if any.
        until: Option<u64>,
    },
    /// Bit rot at `at`: `bytes` bytes of synced data flipped in files matching
    /// `path` (a glob relative to the data_dir).
    Corrupt {
        /// Which node.
        node: String,
        /// When.
        at: u64,
        /// The glob.
        path: String,
        /// How many bytes.
        bytes: u32,
    },
}
