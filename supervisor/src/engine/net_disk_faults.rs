//! Link faults (`link`: delay and loss between two groups for a window;
//! `reset`: every TCP connection between them breaks) and disk faults
//! (`disk_full`, `corrupt`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::scenario::plan::Groups;
use crate::sim::seeds::Streams;

impl Supervisor {
    /// The host ids of both groups (`and` absent: every other host).
    fn group_ids(&self, g: &Groups) -> (Vec<vnet::HostId>, Vec<vnet::HostId>) {
        let a = self.host_ids(|n| g.between.contains(n));
        let b = match &g.and {
            Some(and) => self.host_ids(|n| and.contains(n)),
            None => self.host_ids(|n| !g.between.contains(n)),
        };
        (a, b)
    }

    fn group_label(g: &Groups) -> String {
        match &g.and {
            Some(and) => format!("{} <-> {}", g.between.join(","), and.join(",")),
            None => format!("{} <-> the rest", g.between.join(",")),
        }
    }

    /// Gives the links between the groups (both ways) these conditions, or
    /// (`None`) the scenario's again.
    pub(super) fn set_links(&mut self, g: &Groups, params: Option<vnet::LinkParams>) {
        let (a, b) = self.group_ids(g);
        for &x in &a {
            for &y in &b {
                for (from, to) in [(x, y), (y, x)] {
                    match params {
                        Some(p) => {
                            if let Err(e) = self.sim.net.net_mut().set_link(from, to, p) {
                                eprintln!("faultline: internal error: link fault: {e}");
                            }
                        }
                        None => self.sim.net.net_mut().clear_link(from, to),
                    }
                }
            }
        }
        let label = Self::group_label(g);
        match params {
            Some(p) => {
                let mut args = vec![
                    p.delay_min as i64,
                    p.delay_max as i64,
                    (p.loss * 1e6) as i64,
                ];
                if p.duplicate > 0.0 {
                    args.push((p.duplicate * 1e6) as i64);
                }
                self.fault("link", &label, &args, Self::link_detail(&p))
            }
            None => self.fault("link_normal", &label, &[], "links as in [net] again".into()),
        }
    }

    /// A link fault's conditions in words, for faults.json: the duplicate
    /// rate only when there is one, so older logs read the same.
    fn link_detail(p: &vnet::LinkParams) -> String {
        let mut detail = format!(
            "delay {:.3}-{:.3}ms, loss {}",
            p.delay_min as f64 / 1e6,
            p.delay_max as f64 / 1e6,
            p.loss
        );
        if p.duplicate > 0.0 {
            detail += &format!(", datagrams duplicated {}", p.duplicate);
        }
        detail
    }

    /// Resets every TCP connection between the groups.
    pub(super) fn reset_links(&mut self, g: &Groups) {
        let (a, b) = self.group_ids(g);
        let n = self
            .sim
            .net
            .net_mut()
            .reset_between(&a, &b, self.sim.clock.now());
        let label = Self::group_label(g);
        self.fault(
            "reset",
            &label,
            &[n as i64],
            format!("{n} connection(s) reset"),
        );
    }

    /// The node's disk fills up (writes fail with ENOSPC) or has room again.
    pub(super) fn disk_full(&mut self, name: &str, full: bool) {
        let host = self.sim.net.hosts[name];
        let Some(d) = self.sim.disks.of_host(host) else {
            return;
        };
        self.sim.disks.get_mut(d).disk.config_mut().full = full;
        let (kind, detail) = if full {
            ("disk_full", "writes fail with ENOSPC")
        } else {
            ("disk_space", "writes succeed again")
        };
        self.fault(kind, name, &[], detail.into());
    }

    /// Flips `bytes` bytes of synced data in the node's files matching `glob`.
    pub(super) fn corrupt(&mut self, name: &str, glob: &str, bytes: u32) {
        let host = self.sim.net.hosts[name];
        let Some(d) = self.sim.disks.of_host(host) else {
            return;
        };
        // Its own stream: which bytes rot depends on the seed, the node,
        // the glob and the time, and on nothing else the run drew.
        let key = format!("corrupt {name} {glob} {}", self.sim.clock.now());
        let seed =
            Streams::split(self.cfg.seed).faults ^ crate::sim::trace::hash_bytes(key.as_bytes());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        match self
            .sim
            .disks
            .get_mut(d)
            .disk
            .corrupt(glob, bytes, &mut rng)
        {
            Ok(flips) => {
                let detail = if flips.is_empty() {
                    format!("no synced data in files matching {glob:?}")
                } else {
                    flips
                        .iter()
                        .map(|f| {
                            format!("{} byte {} ^= {:#04x}", f.path.display(), f.offset, f.mask)
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                self.fault("corrupt", name, &[flips.len() as i64], detail);
            }
            Err(e) => eprintln!("faultline: internal error: corrupting {name}'s disk: {e}"),
        }
    }
}
