//! The fault plan: what happens to the cluster at which virtual time. A
//! scenario's `[[fault]]` entries are turned into a sorted list of events
//! before the seed starts, from the seed alone, so the plan is part of what a
//! seed reproduces. The entries are `fault_spec`'s, the events
//! `fault_event`'s.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use super::fault_event::{FaultEvent, PlannedEvent, Scheduled};
pub use super::fault_spec::{FaultSpec, Groups, Outage, PlanRules};
use crate::sim::seeds::Streams;

/// A planned event, with its fault's number and whether that fault is an
/// outage (for `max_down`).
struct Planned {
    t: u64,
    event: FaultEvent,
    fault: u32,
    outage: bool,
}

impl Planned {
    fn outage(&self) -> Option<u32> {
        self.outage.then_some(self.fault)
    }
}

/// Which entries a seed uses: all of them, or with `swarm` a seeded subset
/// of the `[[fault]]` entries (each kept with probability 1/2, at least
/// one). A node's `clock_offset` is part of the node, never dropped.
pub fn enabled(specs: &[FaultSpec], rules: &PlanRules, seed: u64) -> Vec<FaultSpec> {
    specs
        .iter()
        .zip(enabled_mask(specs, rules, seed))
        .filter(|(_, k)| *k)
        .map(|(s, _)| s.clone())
        .collect()
}

/// For each entry of `specs`, whether the seed uses it (see `enabled`).
pub fn enabled_mask(specs: &[FaultSpec], rules: &PlanRules, seed: u64) -> Vec<bool> {
    let entries: Vec<usize> = (0..specs.len())
        .filter(|&i| !matches!(specs[i], FaultSpec::ClockOffset { .. }))
        .collect();
    let mut keep = vec![true; specs.len()];
    if !rules.swarm || entries.is_empty() {
        return keep;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(Streams::split(seed).swarm());
    for &i in &entries {
        keep[i] = rng.gen_bool(0.5);
    }
    if !entries.iter().any(|&i| keep[i]) {
        keep[entries[rng.gen_range(0..entries.len())]] = true;
    }
    keep
}

/// Builds the seed's plan for a run of `duration` ns, sorted by time.
pub fn build(specs: &[FaultSpec], rules: &PlanRules, seed: u64, duration: u64) -> Vec<Scheduled> {
    let streams = Streams::split(seed);
    // Random crashes keep the stream they always had; every other random
    // entry draws from its own, so adding one leaves the others' plans alone.
    let mut rng = ChaCha8Rng::seed_from_u64(streams.faults);
    let quiet_from = rules.quiet.map(|q| duration.saturating_sub(q));
    let horizon = quiet_from.unwrap_or(duration);
    let mut plan: Vec<Planned> = Vec::new();
    let mut faults = 0u32;
    // Each call starts a new fault unless `same` says the event ends the last one.
    let mut push =
        |plan: &mut Vec<Planned>, t: u64, event: FaultEvent, outage: bool, same: bool| {
            faults += u32::from(!same);
            plan.push(Planned {
                t,
                event,
                fault: faults,
                outage,
            })
        };
    for (index, spec) in specs.iter().enumerate() {
        let mut own = ChaCha8Rng::seed_from_u64(streams.fault_entry(index));
        match spec {
            FaultSpec::Partition {
                at,
                until,
                isolate,
                from,
                one_way,
            } => {
                let event = FaultEvent::Partition {
                    isolate: isolate.clone(),
                    from: from.clone(),
                    one_way: *one_way,
                };
                push(&mut plan, *at, event, false, false);
                if let Some(u) = until.or(quiet_from) {
                    push(&mut plan, u, FaultEvent::Heal, false, true);
                }
            }
            FaultSpec::OutageAt {
                kind,
                at,
                node,
                down,
            } => {
                push(&mut plan, *at, kind.start(node), true, false);
                push(&mut plan, at + down, kind.end(node), true, true);
            }
            FaultSpec::FsyncError { .. }
            | FaultSpec::WriteError { .. }
            | FaultSpec::DiskBug { .. } => {}
            FaultSpec::OutageRandom {
                kind,
                every,
                min_down,
                max_down,
                max_down_nodes,
                nodes,
                from,
                until,
            } => {
                let rng = if *kind == Outage::Crash {
                    &mut rng
                } else {
                    &mut own
                };
                let window = (*from, until.unwrap_or(horizon).min(horizon));
                for (t, node, down) in random_outages(
                    rng,
                    window,
                    *every,
                    (*min_down, *max_down),
                    *max_down_nodes,
                    nodes,
                ) {
                    push(&mut plan, t, kind.start(node), true, false);
                    push(&mut plan, t + down, kind.end(node), true, true);
                }
            }
            FaultSpec::ClockJump { at, node, by } => {
                push(
                    &mut plan,
                    *at,
                    FaultEvent::ClockJump(node.clone(), *by),
                    false,
                    false,
                );
            }
            FaultSpec::ClockJumpRandom {
                every,
                nodes,
                max_by,
            } => {
                let mut t = 0u64;
                loop {
                    t = t.saturating_add(exponential(&mut own, *every));
                    if t >= horizon || nodes.is_empty() {
                        break;
                    }
                    let node = nodes[own.gen_range(0..nodes.len())].clone();
                    let by = own.gen_range(-(*max_by as i64)..=*max_by as i64);
                    push(&mut plan, t, FaultEvent::ClockJump(node, by), false, false);
                }
            }
            FaultSpec::ClockDrift {
                node,
                ppm,
                at,
                until,
            } => {
                push(
                    &mut plan,
                    *at,
                    FaultEvent::ClockDrift(node.clone(), *ppm),
                    false,
                    false,
                );
                if let Some(u) = until.or(quiet_from) {
                    push(
                        &mut plan,
                        u,
                        FaultEvent::ClockDrift(node.clone(), 0),
                        false,
                        true,
                    );
                }
            }
            FaultSpec::ClockOffset { node, by } => {
                push(
                    &mut plan,
                    0,
                    FaultEvent::ClockOffset(node.clone(), *by),
                    false,
                    false,
                );
            }
            FaultSpec::Link {
                groups,
                at,
                until,
                params,
            } => {
                push(
                    &mut plan,
                    *at,
                    FaultEvent::Link(groups.clone(), *params),
                    false,
                    false,
                );
                if let Some(u) = until.or(quiet_from) {
                    push(
                        &mut plan,
                        u,
                        FaultEvent::LinkNormal(groups.clone()),
                        false,
                        true,
                    );
                }
            }
            FaultSpec::Reset { groups, at } => {
                push(
                    &mut plan,
                    *at,
                    FaultEvent::Reset(groups.clone()),
                    false,
                    false,
                );
            }
            FaultSpec::DiskFull { node, at, until } => {
                push(
                    &mut plan,
                    *at,
                    FaultEvent::DiskFull(node.clone(), true),
                    false,
                    false,
                );
                if let Some(u) = until.or(quiet_from) {
                    push(
                        &mut plan,
                        u,
                        FaultEvent::DiskFull(node.clone(), false),
                        false,
                        true,
                    );
                }
            }
            FaultSpec::Corrupt {
                node,
                at,
                path,
                bytes,
            } => {
                let event = FaultEvent::Corrupt {
                    node: node.clone(),
                    path: path.clone(),
                    bytes: *bytes,
                };
                push(&mut plan, *at, event, false, false);
            }
        }
    }
    // Stable: events at the same time keep the order they were planned in.
    plan.sort_by_key(|e| e.t);
    if let Some(q) = quiet_from {
        quiet_period(&mut plan, q);
    }
    if let Some(max) = rules.max_down {
        limit_down(&mut plan, max);
    }
    plan.into_iter()
        .map(|p| Scheduled {
            t: p.t,
            event: p.event,
            fault: Some(p.fault),
        })
        .collect()
}

/// From `q` on no fault starts; whatever is still in effect then ends at `q`.
fn quiet_period(plan: &mut Vec<Planned>, q: u64) {
    let late_starts: Vec<u32> = plan
        .iter()
        .filter(|p| p.t >= q && !p.event.ends_fault() && p.t > 0)
        .filter_map(Planned::outage)
        .collect();
    plan.retain(|p| {
        let dropped_outage = p.outage().is_some_and(|o| late_starts.contains(&o));
        !dropped_outage && (p.t < q || p.t == 0 || p.event.ends_fault())
    });
    for p in plan.iter_mut() {
        p.t = p.t.min(q);
    }
    plan.sort_by_key(|e| e.t);
}

/// Drops every outage that would take more than `max` nodes down at once
/// (or a node already down), counting all kinds together.
fn limit_down(plan: &mut Vec<Planned>, max: usize) {
    let mut down: Vec<(u32, String)> = Vec::new();
    let mut dropped: Vec<u32> = Vec::new();
    for p in plan.iter() {
        let Some(o) = p.outage() else { continue };
        match &p.event {
            FaultEvent::Crash(n) | FaultEvent::Kill(n) | FaultEvent::Pause(n) => {
                if down.len() >= max || down.iter().any(|(_, d)| d == n) {
                    dropped.push(o);
                } else {
                    down.push((o, n.clone()));
                }
            }
            _ => down.retain(|(d, _)| *d != o),
        }
    }
    plan.retain(|p| !p.outage().is_some_and(|o| dropped.contains(&o)));
}

/// An exponential gap with mean `every` (events arrive as a Poisson process).
fn exponential(rng: &mut ChaCha8Rng, every: u64) -> u64 {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    (-u.ln() * every as f64) as u64
}

/// Random outages in `window`: (start, node, down time).
fn random_outages<'a>(
    rng: &mut ChaCha8Rng,
    (from, to): (u64, u64),
    every: u64,
    (min_down, max_down): (u64, u64),
    max_down_nodes: usize,
    nodes: &'a [String],
) -> Vec<(u64, &'a str, u64)> {
    let mut out = Vec::new();
    // When each node is back up (0 = up).
    let mut up_at = vec![0u64; nodes.len()];
    let mut t = from;
    loop {
        t = t.saturating_add(exponential(rng, every));
        if t >= to {
            return out;
        }
        let down_now = up_at.iter().filter(|&&u| u > t).count();
        let candidates: Vec<usize> = (0..nodes.len()).filter(|&i| up_at[i] <= t).collect();
        if down_now >= max_down_nodes || candidates.is_empty() {
            continue;
        }
        let i = candidates[rng.gen_range(0..candidates.len())];
        let down = rng.gen_range(min_down..=max_down);
        up_at[i] = t + down;
        out.push((t, nodes[i].as_str(), down));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(max_down_nodes: usize) -> FaultSpec {
        FaultSpec::OutageRandom {
            kind: Outage::Crash,
            every: 1_000_000_000,
            min_down: 10_000_000,
            max_down: 500_000_000,
            max_down_nodes,
            nodes: vec!["a".into(), "b".into(), "c".into()],
            from: 0,
            until: None,
        }
    }

    #[test]
    fn same_seed_same_plan_and_bounds_hold() {
        let a = build(&[random(1)], &PlanRules::default(), 7, 60_000_000_000);
        assert_eq!(
            a,
            build(&[random(1)], &PlanRules::default(), 7, 60_000_000_000)
        );
        assert_ne!(
            a,
            build(&[random(1)], &PlanRules::default(), 8, 60_000_000_000)
        );
        assert!(
            a.len() > 20,
            "about one crash a second for a minute: {}",
            a.len()
        );
        // Never more than one node down at once.
        let mut down = 0i32;
        for e in &a {
            match &e.event {
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
            &[FaultSpec::OutageAt {
                kind: Outage::Crash,
                at: 5,
                node: "a".into(),
                down: 3,
            }],
            &PlanRules::default(),
            1,
            100,
        );
        let planned = |t, event| Scheduled {
            t,
            event,
            fault: Some(1),
        };
        assert_eq!(
            plan,
            vec![
                planned(5, FaultEvent::Crash("a".into())),
                planned(8, FaultEvent::Restart("a".into()))
            ]
        );
    }
}
