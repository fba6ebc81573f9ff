//! One file's durability: its durable bytes plus the unsynced changes since,
//! in order, so a crash can replay exactly the prefix it decides to keep.

use std::mem;
use std::path::PathBuf;

use crate::content::Content;
use crate::plan::{Candidate, Cut};
use crate::report::{FileReport, TornWrite};
use crate::Ino;

/// Bytes of a disk sector: a torn write keeps or loses whole sectors (ALICE's
/// sector-granular atomicity), counted on sector boundaries of the file.
pub const SECTOR_SIZE: u64 = 512;

/// One unsynced change to a file's bytes.
#[derive(Debug)]
pub(crate) enum DataOp {
    /// `pwrite` of `data` at `offset`.
    Write { offset: u64, data: Vec<u8> },
    /// `ftruncate` (or a size-changing `fallocate`) to this length; atomic.
    SetLen(u64),
}

impl DataOp {
    fn apply(&self, content: &mut Content) {
        match self {
            DataOp::Write { offset, data } => content.write(*offset, data),
            DataOp::SetLen(len) => content.set_len(*len),
        }
    }

    /// Size of the file right after this change, given its size before.
    fn len_after(&self, len: u64) -> u64 {
        match self {
            DataOp::Write { offset, data } => len.max(offset + data.len() as u64),
            DataOp::SetLen(new) => *new,
        }
    }

    /// How many sectors the change spans: the pieces a crash may tear it into.
    fn sectors(&self) -> u64 {
        match self {
            DataOp::Write { offset, data } if !data.is_empty() => {
                let end = offset + data.len() as u64;
                end.div_ceil(SECTOR_SIZE) - offset / SECTOR_SIZE
            }
            _ => 1,
        }
    }

    /// Persists only the first `sectors` sectors of a write, as a power cut
    /// in the middle of it would; a length change cannot tear.
    fn apply_torn(&self, sectors: u64, content: &mut Content) -> Option<TornWrite> {
        let DataOp::Write { offset, data } = self else {
            return None;
        };
        let boundary = (offset / SECTOR_SIZE + sectors) * SECTOR_SIZE;
        let persisted = (boundary - offset).min(data.len() as u64);
        content.write(*offset, &data[..persisted as usize]);
        Some(TornWrite {
            offset: *offset,
            len: data.len() as u64,
            persisted,
        })
    }
}

/// An unsynced change with its place in the disk-wide order of changes.
#[derive(Debug)]
struct Pending {
    seq: u64,
    op: DataOp,
}

/// Durable bytes of one file and what happened to it since the last sync.
#[derive(Debug, Default)]
pub(crate) struct FileData {
    durable: Content,
    pending: Vec<Pending>,
    /// Current size, including changes that will never become durable.
    len: u64,
    /// Changes dropped by a failed or lying fsync since the last crash: they
    /// stay visible in the backing file but are lost on crash.
    doomed: usize,
}

impl FileData {
    /// A file whose found contents count as durable.
    pub fn durable(content: Content) -> FileData {
        FileData {
            len: content.len(),
            durable: content,
            ..FileData::default()
        }
    }

    /// The bytes a crash right now would keep if nothing unsynced survived.
    pub fn durable_content(&self) -> &Content {
        &self.durable
    }

    /// The durable bytes, to change in place (bit rot).
    pub fn durable_mut(&mut self) -> &mut Content {
        &mut self.durable
    }

    /// Current size as the tracee sees it.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether a crash has anything to decide for this file.
    pub fn is_dirty(&self) -> bool {
        !self.pending.is_empty() || self.doomed > 0
    }

    /// Records a change that already happened to the backing file.
    pub fn record(&mut self, seq: u64, op: DataOp) {
        self.len = op.len_after(self.len);
        self.pending.push(Pending { seq, op });
    }

    /// Ends an fsync: with `persist` the pending changes become durable;
    /// without (EIO, lying fsync) they are dropped as Linux drops dirty pages
    /// after a writeback error, so no later fsync can persist them.
    pub fn sync(&mut self, persist: bool) {
        if persist {
            for pending in self.pending.drain(..) {
                pending.op.apply(&mut self.durable);
            }
        } else {
            self.doomed += mem::take(&mut self.pending).len();
        }
    }

    /// The pending changes a crash may keep, in order.
    pub fn candidates(&self) -> Vec<Candidate> {
        self.pending
            .iter()
            .map(|p| Candidate {
                seq: p.seq,
                sectors: p.op.sectors(),
            })
            .collect()
    }

    /// Applies a crash: keeps the chosen changes in order (and the torn
    /// sectors of the first change not kept), forgets the rest, and makes
    /// the result durable.
    pub fn crash(&mut self, cut: Cut, ino: Ino, path: PathBuf) -> FileReport {
        let len_before = self.len;
        let total = self.pending.len();
        let mut kept = 0;
        let mut torn = None;
        let mut tear_next = cut.torn_sectors;
        for (i, pending) in mem::take(&mut self.pending).into_iter().enumerate() {
            if cut.kept.get(i).copied().unwrap_or(false) {
                pending.op.apply(&mut self.durable);
                kept += 1;
            } else if tear_next > 0 {
                torn = pending.op.apply_torn(tear_next, &mut self.durable);
                tear_next = 0;
            }
        }
        self.len = self.durable.len();
        FileReport {
            path,
            ino,
            kept_changes: kept,
            lost_changes: total - kept - usize::from(torn.is_some()),
            dropped_changes: mem::take(&mut self.doomed),
            torn,
            len_before,
            len_after: self.len,
        }
    }
}
