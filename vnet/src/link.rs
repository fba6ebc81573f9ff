//! Links between hosts: delay and loss draws from the seeded RNG, per-link
//! overrides, and partitions (cut directed links).

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::LinkParams;
use crate::host::HostId;

/// Every link's behaviour and the one RNG all of vnet's random choices come
/// from, so a seed and a call sequence fix the whole network's behaviour.
pub(crate) struct Links {
    rng: ChaCha8Rng,
    default: LinkParams,
    overrides: BTreeMap<(HostId, HostId), LinkParams>,
    cut: BTreeSet<(HostId, HostId)>,
}

impl Links {
    /// Links that all behave like `default`, with no partition.
    pub(crate) fn new(seed: u64, default: LinkParams) -> Links {
        Links {
            rng: ChaCha8Rng::seed_from_u64(seed),
            default,
            overrides: BTreeMap::new(),
            cut: BTreeSet::new(),
        }
    }

    /// Gives the link `from → to` its own parameters.
    pub(crate) fn set(&mut self, from: HostId, to: HostId, params: LinkParams) {
        self.overrides.insert((from, to), params);
    }

    /// The link `from → to` behaves like every other again.
    pub(crate) fn unset(&mut self, from: HostId, to: HostId) {
        self.overrides.remove(&(from, to));
    }

    fn params(&self, from: HostId, to: HostId) -> &LinkParams {
        self.overrides.get(&(from, to)).unwrap_or(&self.default)
    }

    /// Draws the delivery delay of one message on `from → to`.
    pub(crate) fn delay(&mut self, from: HostId, to: HostId) -> u64 {
        let p = *self.params(from, to);
        self.rng.gen_range(p.delay_min..=p.delay_max)
    }

    /// Draws whether one datagram on `from → to` is lost.
    pub(crate) fn lost(&mut self, from: HostId, to: HostId) -> bool {
        let loss = self.params(from, to).loss;
        self.rng.gen_bool(loss)
    }

    /// Draws whether one datagram on `from → to` arrives twice (no draw
    /// when the link never duplicates, so other draws stay where they were).
    pub(crate) fn duplicated(&mut self, from: HostId, to: HostId) -> bool {
        let p = self.params(from, to).duplicate;
        p > 0.0 && self.rng.gen_bool(p)
    }

    /// Draws whether one transmission of a stream segment on `from → to` is
    /// lost (no draw on a link that never loses segments).
    pub(crate) fn segment_lost(&mut self, from: HostId, to: HostId) -> bool {
        let p = self.params(from, to).stream_loss;
        p > 0.0 && self.rng.gen_bool(p)
    }

    /// Cuts the directed link `from → to` (a host never loses itself).
    pub(crate) fn cut(&mut self, from: HostId, to: HostId) {
        if from != to {
            self.cut.insert((from, to));
        }
    }

    /// Whether messages on `from → to` currently cannot get through.
    pub(crate) fn is_cut(&self, from: HostId, to: HostId) -> bool {
        self.cut.contains(&(from, to))
    }

    /// Restores every cut link.
    pub(crate) fn heal(&mut self) {
        self.cut.clear();
    }
}
