//! The last wake scan of the network waiters that found none of them
//! ready, remembered so that the next scan can be skipped while nothing it
//! would look at has changed: the simulated network (its generation), the
//! host's memory of real descriptors found not ready (its epoch) and the
//! waiters themselves (the same threads, none parked anew). Such a scan
//! would find every waiter not ready again, and change nothing: each
//! waiter's `seen` already is the generation. The run loop scans before
//! nearly every decision, most often with nothing changed since the last.

use crate::sim::world::Vtid;

/// What a scan that found no network waiter ready looked at.
#[derive(Debug, Default)]
pub struct QuietNetScan {
    stamp: Option<(u64, u64, u64)>,
    waiters: Vec<Vtid>,
}

impl QuietNetScan {
    /// Whether a scan of `waiters` now would find what the remembered one
    /// did: `stamp` is (network generation, host memory epoch, net parks);
    /// `None` (a host that remembers nothing) never matches.
    pub fn holds(&self, stamp: Option<(u64, u64, u64)>, waiters: &[Vtid]) -> bool {
        stamp.is_some() && self.stamp == stamp && self.waiters == waiters
    }

    /// A scan of `waiters` at `stamp` found none ready.
    pub fn remember(&mut self, stamp: Option<(u64, u64, u64)>, waiters: &[Vtid]) {
        self.stamp = stamp;
        self.waiters.clear();
        self.waiters.extend_from_slice(waiters);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_is_skipped_only_when_nothing_it_looks_at_changed() {
        let mut quiet = QuietNetScan::default();
        assert!(
            !quiet.holds(Some((1, 1, 1)), &[3, 5]),
            "nothing remembered yet"
        );
        quiet.remember(Some((1, 1, 1)), &[3, 5]);
        assert!(quiet.holds(Some((1, 1, 1)), &[3, 5]));
        assert!(
            !quiet.holds(Some((2, 1, 1)), &[3, 5]),
            "the network changed"
        );
        assert!(
            !quiet.holds(Some((1, 2, 1)), &[3, 5]),
            "a descriptor may be ready"
        );
        assert!(
            !quiet.holds(Some((1, 1, 2)), &[3, 5]),
            "a thread parked anew"
        );
        assert!(!quiet.holds(Some((1, 1, 1)), &[3]), "other waiters");
        quiet.remember(None, &[3, 5]);
        assert!(!quiet.holds(None, &[3, 5]), "a host without memory");
    }
}
