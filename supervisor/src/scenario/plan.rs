//! The fault plan: what happens to the cluster at which virtual time. A
//! scenario's `[[fault]]` entries are turned into a sorted list of events
//! before the seed starts, from the seed alone, so the plan is part of what a
//! seed reproduces.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
    /// Crash `node` at `at`; restart it `down` later.
    CrashAt {
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
    /// Random crashes: on average one every `every`, each node down for a
    /// seeded time in [min_down, max_down], at most `max_down_nodes` down at once.
    CrashRandom {
        /// Mean interval between crashes.
        every: u64,
        /// Shortest down time.
        min_down: u64,
        /// Longest down time.
        max_down: u64,
        /// Most nodes down at the same time.
        max_down_nodes: usize,
        /// The nodes that may crash.
        nodes: Vec<String>,
    },
}

/// Something the supervisor does at a planned time.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Start the node's command again on its surviving disk.
    Restart(String),
    /// The node's machine reboots after its program exited by itself
    /// (`reboot_on_exit`): what the disk never made durable is gone.
    Reboot(String),
}

/// Builds the seed's plan for a run of `duration` ns, sorted by time.
pub fn build(specs: &[FaultSpec], seed: u64, duration: u64) -> Vec<(u64, FaultEvent)> {
    let mut rng = ChaCha8Rng::seed_from_u64(crate::sim::seeds::Streams::split(seed).faults);
    let mut plan = Vec::new();
    for spec in specs {
        match spec {
            FaultSpec::Partition {
                at,
                until,
                isolate,
                from,
                one_way,
            } => {
                plan.push((
                    *at,
                    FaultEvent::Partition {
                        isolate: isolate.clone(),
                        from: from.clone(),
                        one_way: *one_way,
                    },
                ));
                if let Some(u) = until {
                    plan.push((*u, FaultEvent::Heal));
                }
            }
            FaultSpec::CrashAt { at, node, down } => {
                plan.push((*at, FaultEvent::Crash(node.clone())));
                plan.push((at + down, FaultEvent::Restart(node.clone())));
            }
            FaultSpec::FsyncError { .. }
            | FaultSpec::WriteError { .. }
            | FaultSpec::DiskBug { .. } => {}
            FaultSpec::CrashRandom {
                every,
                min_down,
                max_down,
                max_down_nodes,
                nodes,
            } => {
                random_crashes(
                    &mut rng,
                    &mut plan,
                    duration,
                    *every,
                    (*min_down, *max_down),
                    *max_down_nodes,
                    nodes,
                );
            }
        }
    }
    // Stable: events at the same time keep the order they were planned in.
    plan.sort_by_key(|e| e.0);
    plan
}

fn random_crashes(
    rng: &mut ChaCha8Rng,
    plan: &mut Vec<(u64, FaultEvent)>,
    duration: u64,
    every: u64,
    (min_down, max_down): (u64, u64),
    max_down_nodes: usize,
    nodes: &[String],
) {
    // When each node is back up (0 = up).
    let mut up_at = vec![0u64; nodes.len()];
    let mut t = 0u64;
    loop {
        // Exponential gaps: crashes arrive as a Poisson process.
        let u: f64 = rng.gen_range(f64::EPSILON..1.0);
        t = t.saturating_add((-u.ln() * every as f64) as u64);
        if t >= duration {
            return;
        }
        let down_now = up_at.iter().filter(|&&u| u > t).count();
        let candidates: Vec<usize> = (0..nodes.len()).filter(|&i| up_at[i] <= t).collect();
        if down_now >= max_down_nodes || candidates.is_empty() {
            continue;
        }
        let i = candidates[rng.gen_range(0..candidates.len())];
        let down = rng.gen_range(min_down..=max_down);
        up_at[i] = t + down;
        plan.push((t, FaultEvent::Crash(nodes[i].clone())));
        plan.push((t + down, FaultEvent::Restart(nodes[i].clone())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(max_down_nodes: usize) -> FaultSpec {
        FaultSpec::CrashRandom {
            every: 1_000_000_000,
            min_down: 10_000_000,
            max_down: 500_000_000,
            max_down_nodes,
            nodes: vec!["a".into(), "b".into(), "c".into()],
        }
    }

    #[test]
    fn same_seed_same_plan_and_bounds_hold() {
        let a = build(&[random(1)], 7, 60_000_000_000);
        assert_eq!(a, build(&[random(1)], 7, 60_000_000_000));
        assert_ne!(a, build(&[random(1)], 8, 60_000_000_000));
        assert!(
            a.len() > 20,
            "about one crash a second for a minute: {}",
            a.len()
        );
        // Never more than one node down at once.
        let mut down = 0i32;
        for (_, e) in &a {
            match e {
                FaultEvent::Crash(_) => down += 1,
                FaultEvent::Restart(_) => down -= 1,
                _ => {}
            }
            assert!((0..=1).contains(&down));
        }
    }

    #[test]
    fn planned_crash_restarts_after_down_time() {
        let plan = build(
            &[FaultSpec::CrashAt {
                at: 5,
                node: "a".into(),
                down: 3,
            }],
            1,
            100,
        );
        assert_eq!(
            plan,
            vec![
                (5, FaultEvent::Crash("a".into())),
                (8, FaultEvent::Restart("a".into()))
            ]
        );
    }
}
