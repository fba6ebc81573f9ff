//! Which syscalls fail: planned one-shot failures by path prefix (a fault
//! plan fires them at chosen virtual times) and seeded probabilities.

use std::path::{Path, PathBuf};

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::Errno;

/// The syscalls vfs can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FaultKind {
    Fsync,
    Write,
}

/// One planned failure: the next `kind` call on a path under `prefix`.
#[derive(Debug)]
struct Shot {
    kind: FaultKind,
    prefix: PathBuf,
    errno: Errno,
}

/// Planned failures not fired yet, in the order they were planned.
#[derive(Debug, Default)]
pub(crate) struct Planned {
    shots: Vec<Shot>,
}

impl Planned {
    /// Plans one failure of the next `kind` call on a path under `prefix`.
    pub fn add(&mut self, kind: FaultKind, prefix: PathBuf, errno: Errno) {
        self.shots.push(Shot {
            kind,
            prefix,
            errno,
        });
    }

    /// Whether any failure of `kind` is planned (so the caller can skip finding the path).
    pub fn has(&self, kind: FaultKind) -> bool {
        self.shots.iter().any(|shot| shot.kind == kind)
    }

    /// Fires the oldest planned failure matching the call, if any.
    pub fn take(&mut self, kind: FaultKind, path: &Path) -> Option<Errno> {
        let index = self
            .shots
            .iter()
            .position(|shot| shot.kind == kind && path.starts_with(&shot.prefix))?;
        Some(self.shots.remove(index).errno)
    }
}

/// Draws whether a call fails and with which errno, from `(probability,
/// errno)` odds. Draws nothing when every probability is zero, so a disk
/// without faults leaves the random stream untouched.
pub(crate) fn roll(rng: &mut ChaCha8Rng, odds: &[(f64, Errno)]) -> Option<Errno> {
    if odds.iter().all(|&(p, _)| p <= 0.0) {
        return None;
    }
    let mut draw: f64 = rng.gen();
    odds.iter().find_map(|&(p, errno)| {
        if draw < p {
            Some(errno)
        } else {
            draw -= p;
            None
        }
    })
}
