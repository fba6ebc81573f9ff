//! The last wake scan of the network waiters that found none of them
//! ready, remembered so that the next scan can be skipped while nothing it
//! would look at has changed: the simulated network (its generation), the
//! host's memory of real descriptors found not ready (its epoch) and the
//! waiters themselves (the same threads, none parked anew). Such a scan
//! would find every waiter not ready again, and change nothing: each
//! waiter's `seen` already is the generation. The run loop scans before
//! nearly every decision, most often with nothing changed since the last.

use crate::sim::world::Vtid;

/// What a wake scan of the network waiters looks at besides the waiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanStamp {
    /// The simulated network's generation (`NetState::generation`).
    pub generation: u64,
    /// The host's memory epoch (`HostProbe::memo_epoch`).
    pub memo_epoch: u64,
    /// Waits on the network begun so far (`Sim::net_parks`).
    pub net_parks: u64,
}

/// What a scan that found no network waiter ready looked at.
#[derive(Debug, Default)]
pub struct QuietNetScan {
    stamp: Option<ScanStamp>,
    waiters: Vec<Vtid>,
}

impl QuietNetScan {
    /// Whether a scan of `waiters` at `stamp` would find what the
    /// remembered one did; `None` (a host that remembers nothing) never
    /// matches.
    pub fn holds(&self, stamp: Option<ScanStamp>, waiters: &[Vtid]) -> bool {
        stamp.is_some() && self.stamp == stamp && self.waiters == waiters
    }

    /// A scan of `waiters` at `stamp` found none ready.
    pub fn remember(&mut self, stamp: Option<ScanStamp>, waiters: &[Vtid]) {
        self.stamp = stamp;
        self.waiters.clear();
        self.waiters.extend_from_slice(waiters);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(generation: u64, memo_epoch: u64, net_parks: u64) -> Option<ScanStamp> {
        Some(ScanStamp {
            generation,
            memo_epoch,
            net_parks,
        })
    }

    #[test]
    fn a_scan_is_skipped_only_when_nothing_it_looks_at_changed() {
        let mut quiet = QuietNetScan::default();
        assert!(!quiet.holds(at(1, 1, 1), &[3, 5]), "nothing remembered yet");
        quiet.remember(at(1, 1, 1), &[3, 5]);
        assert!(quiet.holds(at(1, 1, 1), &[3, 5]));
        assert!(!quiet.holds(at(2, 1, 1), &[3, 5]), "the network changed");
        assert!(
            !quiet.holds(at(1, 2, 1), &[3, 5]),
            "a descriptor may be ready"
        );
        assert!(!quiet.holds(at(1, 1, 2), &[3, 5]), "a thread parked anew");
        assert!(!quiet.holds(at(1, 1, 1), &[3]), "other waiters");
        quiet.remember(None, &[3, 5]);
        assert!(!quiet.holds(None, &[3, 5]), "a host without memory");
    }
}
