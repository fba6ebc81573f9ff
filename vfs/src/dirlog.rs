//! Namespace operations not yet durable, in issue order. A directory fsync
//! makes that directory's part durable; a crash keeps a prefix of the rest
//! (journaling file systems commit metadata operations in order).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use serde::Serialize;

use crate::namespace::Tree;
use crate::report::DirOpReport;
use crate::Ino;

/// A namespace operation as the tracee issued it, named in crash reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum DirOp {
    /// A file was created.
    Create {
        /// The new file.
        path: PathBuf,
    },
    /// A directory was created.
    Mkdir {
        /// The new directory.
        path: PathBuf,
    },
    /// A hard link was added.
    Link {
        /// The path linked to.
        existing: PathBuf,
        /// The new name.
        new: PathBuf,
    },
    /// A file was unlinked.
    Unlink {
        /// The removed name.
        path: PathBuf,
    },
    /// A directory was removed.
    Rmdir {
        /// The removed directory.
        path: PathBuf,
    },
    /// An entry was renamed, replacing any entry at `to`.
    Rename {
        /// The old name.
        from: PathBuf,
        /// The new name.
        to: PathBuf,
    },
}

impl DirOp {
    /// The operation in words, its paths under `root` (where the program
    /// sees the disk): `rename /data/a.tmp -> /data/a`.
    pub fn describe(&self, root: &std::path::Path) -> String {
        let p = |path: &PathBuf| root.join(path).display().to_string();
        match self {
            DirOp::Create { path } => format!("create {}", p(path)),
            DirOp::Mkdir { path } => format!("mkdir {}", p(path)),
            DirOp::Link { existing, new } => format!("link {} -> {}", p(existing), p(new)),
            DirOp::Unlink { path } => format!("unlink {}", p(path)),
            DirOp::Rmdir { path } => format!("rmdir {}", p(path)),
            DirOp::Rename { from, to } => format!("rename {} -> {}", p(from), p(to)),
        }
    }
}

/// One directory entry set or removed: the unit a directory fsync persists.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    dir: Ino,
    name: OsString,
    target: Option<Ino>,
}

impl Change {
    /// `name` in `dir` now refers to `ino`.
    pub fn set(dir: Ino, name: &OsStr, ino: Ino) -> Change {
        Change {
            dir,
            name: name.to_owned(),
            target: Some(ino),
        }
    }

    /// `name` in `dir` is gone.
    pub fn remove(dir: Ino, name: &OsStr) -> Change {
        Change {
            dir,
            name: name.to_owned(),
            target: None,
        }
    }

    /// Performs the change on a tree.
    pub fn apply(&self, tree: &mut Tree) {
        tree.set(self.dir, &self.name, self.target);
    }
}

/// An operation with the changes of it that are not durable yet (a rename
/// across directories is half durable after fsyncing one of them).
#[derive(Debug)]
struct Unsynced {
    op: DirOp,
    changes: Vec<Change>,
}

/// The unsynced namespace operations of one disk.
#[derive(Debug, Default)]
pub(crate) struct DirLog {
    ops: Vec<Unsynced>,
}

impl DirLog {
    /// Records an operation already applied to the current tree.
    pub fn record(&mut self, op: DirOp, changes: Vec<Change>) {
        self.ops.push(Unsynced { op, changes });
    }

    /// Number of operations a crash has to decide on.
    pub fn count(&self) -> usize {
        self.ops.len()
    }

    /// fsync of directory `dir`: its entry changes become durable, in order.
    pub fn sync_dir(&mut self, dir: Ino, durable: &mut Tree) {
        for unsynced in &mut self.ops {
            unsynced.changes.retain(|change| {
                let synced = change.dir == dir;
                if synced {
                    change.apply(durable);
                }
                !synced
            });
        }
        self.ops.retain(|unsynced| !unsynced.changes.is_empty());
    }

    /// sync/syncfs: every operation becomes durable.
    pub fn sync_all(&mut self, durable: &mut Tree) {
        self.commit_prefix(self.ops.len(), durable);
    }

    /// Makes the first `keep` operations durable in `tree`, forgets the rest,
    /// and reports what became of each.
    pub fn commit_prefix(&mut self, keep: usize, tree: &mut Tree) -> Vec<DirOpReport> {
        self.ops
            .drain(..)
            .enumerate()
            .map(|(index, unsynced)| {
                let survived = index < keep;
                if survived {
                    unsynced
                        .changes
                        .iter()
                        .for_each(|change| change.apply(tree));
                }
                DirOpReport {
                    op: unsynced.op,
                    survived,
                }
            })
            .collect()
    }
}
