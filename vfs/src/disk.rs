//! The disk of one node: takes the supervisor's notifications, answers its
//! fault questions, and applies the crash model to the backing folder.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::backing::{self, Scanned};
use crate::data::{DataOp, FileData};
use crate::dirlog::{Change, DirLog};
use crate::faults::{roll, FaultKind, Planned};
use crate::namespace::{components, Tree};
use crate::plan::{plan_data, plan_dirs};
use crate::{CrashReport, DirOp, DiskConfig, Errno, Ino, VfsError};

/// How much of a disk is in use (see [`Disk::usage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Bytes of the named files.
    pub bytes: u64,
    /// Inodes named, the root included.
    pub inodes: u64,
}

/// One node's simulated disk over a real backing folder.
///
/// The supervisor performs file syscalls for real on the backing folder, then
/// reports them here (paths relative to the root, data calls by [`Ino`]);
/// vfs remembers what is durable so [`Disk::crash`] can rewrite the folder to
/// what a power cut would leave. Durable contents live in memory as sparse
/// pages; unlinked files are kept (a crash may revert the unlink) until the
/// next crash.
#[derive(Debug)]
pub struct Disk {
    pub(crate) root: PathBuf,
    config: DiskConfig,
    /// Mirrors the backing folder.
    pub(crate) current: Tree,
    /// What a crash finds before it considers unsynced operations.
    durable: Tree,
    pub(crate) files: BTreeMap<Ino, FileData>,
    dirlog: DirLog,
    planned: Planned,
    next_ino: u64,
    next_seq: u64,
    /// Separate streams, so fault queries never shift crash outcomes.
    fault_rng: ChaCha8Rng,
    crash_rng: ChaCha8Rng,
}

impl Disk {
    /// Opens the disk backed by `root` (created if missing) with the default
    /// config; whatever the folder already holds counts as durable.
    pub fn new(root: impl Into<PathBuf>, seed: u64) -> Result<Disk, VfsError> {
        Disk::with_config(root, seed, DiskConfig::default())
    }

    /// Like [`Disk::new`] with an explicit config.
    pub fn with_config(
        root: impl Into<PathBuf>,
        seed: u64,
        config: DiskConfig,
    ) -> Result<Disk, VfsError> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(VfsError::io(&root))?;
        let Scanned {
            tree,
            files,
            next_ino,
        } = backing::scan(&root)?;
        Ok(Disk {
            root,
            config,
            durable: tree.clone(),
            current: tree,
            files,
            dirlog: DirLog::default(),
            planned: Planned::default(),
            next_ino,
            next_seq: 0,
            fault_rng: rng(seed, 0),
            crash_rng: rng(seed, 1),
        })
    }

    /// The backing folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The settings in force.
    pub fn config(&self) -> &DiskConfig {
        &self.config
    }

    /// Changes settings mid-run (a fault plan switching faults on or off).
    pub fn config_mut(&mut self) -> &mut DiskConfig {
        &mut self.config
    }

    /// The inode at `path` now, for an `open` without `O_CREAT` (or of a directory).
    pub fn lookup(&self, path: impl AsRef<Path>) -> Result<Ino, VfsError> {
        let path = path.as_ref();
        self.current
            .resolve(&components(path)?)
            .ok_or_else(|| VfsError::NotFound(path.to_path_buf()))
    }

    /// A current path of `ino`; `None` once it has no name (unlinked but open).
    pub fn path_of(&self, ino: Ino) -> Option<PathBuf> {
        if ino == Ino::ROOT {
            return Some(PathBuf::new());
        }
        let entries = self.current.walk();
        entries.into_iter().find(|&(_, i)| i == ino).map(|(p, _)| p)
    }

    /// Current size of a file as the tracee sees it, e.g. the offset an
    /// `O_APPEND` write goes to.
    pub fn file_len(&self, ino: Ino) -> Result<u64, VfsError> {
        Ok(self.file(ino)?.len())
    }

    /// What the disk holds now, for `statfs`: the bytes of the files that
    /// have a name (each inode once, however many links it has) and the
    /// number of inodes named (files and directories, the root included).
    pub fn usage(&self) -> Usage {
        let named: BTreeSet<Ino> = self.current.walk().into_iter().map(|(_, i)| i).collect();
        let bytes = named
            .iter()
            .filter_map(|i| self.files.get(i))
            .map(FileData::len)
            .sum();
        Usage {
            bytes,
            inodes: named.len() as u64 + 1,
        }
    }

    /// `open` with `O_CREAT` succeeded. Idempotent: an existing file keeps its
    /// inode (report `O_TRUNC` as [`Disk::on_truncate`] to 0).
    pub fn on_create(&mut self, path: impl AsRef<Path>) -> Result<Ino, VfsError> {
        let path = path.as_ref();
        let (dir, name) = self.parent_of(path)?;
        match self.current.get(dir, name) {
            Some(ino) if self.current.is_dir(ino) => Err(VfsError::IsADirectory(path.into())),
            Some(ino) => Ok(ino),
            None => {
                let ino = self.alloc_ino();
                self.files.insert(ino, FileData::default());
                let op = DirOp::Create { path: path.into() };
                self.change(op, vec![Change::set(dir, name, ino)]);
                Ok(ino)
            }
        }
    }

    /// `mkdir` succeeded.
    pub fn on_mkdir(&mut self, path: impl AsRef<Path>) -> Result<Ino, VfsError> {
        let path = path.as_ref();
        let (dir, name) = self.parent_of(path)?;
        if self.current.get(dir, name).is_some() {
            return Err(VfsError::AlreadyExists(path.into()));
        }
        let ino = self.alloc_ino();
        self.current.add_dir(ino);
        self.durable.add_dir(ino);
        let op = DirOp::Mkdir { path: path.into() };
        self.change(op, vec![Change::set(dir, name, ino)]);
        Ok(ino)
    }

    /// `link` succeeded: `new` is another name of the file at `existing`.
    pub fn on_link(
        &mut self,
        existing: impl AsRef<Path>,
        new: impl AsRef<Path>,
    ) -> Result<(), VfsError> {
        let (existing, new) = (existing.as_ref(), new.as_ref());
        let ino = self.lookup(existing)?;
        if self.current.is_dir(ino) {
            return Err(VfsError::IsADirectory(existing.into()));
        }
        let (dir, name) = self.parent_of(new)?;
        if self.current.get(dir, name).is_some() {
            return Err(VfsError::AlreadyExists(new.into()));
        }
        let op = DirOp::Link {
            existing: existing.into(),
            new: new.into(),
        };
        self.change(op, vec![Change::set(dir, name, ino)]);
        Ok(())
    }

    /// `unlink` of a file succeeded. Its inode lives on for open fds and for
    /// a crash that reverts the unlink.
    pub fn on_unlink(&mut self, path: impl AsRef<Path>) -> Result<(), VfsError> {
        let path = path.as_ref();
        let (dir, name, ino) = self.entry_of(path)?;
        if self.current.is_dir(ino) {
            return Err(VfsError::IsADirectory(path.into()));
        }
        let op = DirOp::Unlink { path: path.into() };
        self.change(op, vec![Change::remove(dir, name)]);
        Ok(())
    }

    /// `rmdir` succeeded.
    pub fn on_rmdir(&mut self, path: impl AsRef<Path>) -> Result<(), VfsError> {
        let path = path.as_ref();
        let (dir, name, ino) = self.entry_of(path)?;
        if !self.current.is_dir(ino) {
            return Err(VfsError::NotADirectory(path.into()));
        }
        if !self.current.is_empty_dir(ino) {
            return Err(VfsError::NotEmpty(path.into()));
        }
        let op = DirOp::Rmdir { path: path.into() };
        self.change(op, vec![Change::remove(dir, name)]);
        Ok(())
    }

    /// `rename` succeeded, replacing any entry at `to`.
    pub fn on_rename(
        &mut self,
        from: impl AsRef<Path>,
        to: impl AsRef<Path>,
    ) -> Result<(), VfsError> {
        let (from, to) = (from.as_ref(), to.as_ref());
        let (from_dir, from_name, ino) = self.entry_of(from)?;
        let (to_dir, to_name) = self.parent_of(to)?;
        if let Some(old) = self.current.get(to_dir, to_name) {
            match (self.current.is_dir(ino), self.current.is_dir(old)) {
                _ if old == ino => return Ok(()),
                (false, true) => return Err(VfsError::IsADirectory(to.into())),
                (true, false) => return Err(VfsError::NotADirectory(to.into())),
                (true, true) if !self.current.is_empty_dir(old) => {
                    return Err(VfsError::NotEmpty(to.into()))
                }
                _ => {}
            }
        }
        let op = DirOp::Rename {
            from: from.into(),
            to: to.into(),
        };
        let changes = vec![
            Change::remove(from_dir, from_name),
            Change::set(to_dir, to_name, ino),
        ];
        self.change(op, changes);
        Ok(())
    }

    /// A write of `data` at `offset` reached the backing file (`O_APPEND`:
    /// `offset` is the size before the write).
    pub fn on_write(&mut self, ino: Ino, offset: u64, data: &[u8]) -> Result<(), VfsError> {
        let op = DataOp::Write {
            offset,
            data: data.to_vec(),
        };
        self.record(ino, op)
    }

    /// `truncate`/`ftruncate` to `len` succeeded.
    pub fn on_truncate(&mut self, ino: Ino, len: u64) -> Result<(), VfsError> {
        self.record(ino, DataOp::SetLen(len))
    }

    /// `fallocate` without `FALLOC_FL_KEEP_SIZE` (mode 0) succeeded: the file
    /// grows to cover the range with zeros. Other modes change no visible size.
    pub fn on_fallocate(&mut self, ino: Ino, offset: u64, len: u64) -> Result<(), VfsError> {
        let end = offset + len;
        if end > self.file_len(ino)? {
            self.record(ino, DataOp::SetLen(end))?;
        }
        Ok(())
    }

    /// `fsync` or `fdatasync` (the model does not tell them apart) of a file
    /// or directory, also after an `O_SYNC`/`O_DSYNC` write. Performs the
    /// sync in the model, so the supervisor need not call the real one, and
    /// returns the errno the call must fail with, if any. A file fsync that
    /// fails drops the file's dirty data for good; a directory fsync that
    /// fails leaves its entry changes unsynced.
    pub fn on_fsync(&mut self, ino: Ino) -> Result<Option<Errno>, VfsError> {
        let is_file = self.files.contains_key(&ino);
        if !is_file && !self.current.is_dir(ino) {
            return Err(VfsError::UnknownInode(ino));
        }
        let fault = self.draw_fault(ino, FaultKind::Fsync);
        if is_file {
            let persist = fault.is_none() && !self.config.lying_fsync;
            self.file_mut(ino)?.sync(persist);
        } else if fault.is_none() {
            self.dirlog.sync_dir(ino, &mut self.durable);
        }
        if fault.is_none() && self.config.ordered_metadata {
            self.dirlog.sync_all(&mut self.durable);
        }
        Ok(fault)
    }

    /// `msync(MS_SYNC)` of a shared mapping of the file: the mapped range is
    /// read back from the backing file, recorded as a write, and the whole
    /// file is then synced as by [`Disk::on_fsync`]. Mapped stores are
    /// otherwise invisible to vfs and lost on crash. A file without a name
    /// cannot be read back, so only its reported writes are synced.
    pub fn on_msync(&mut self, ino: Ino, offset: u64, len: u64) -> Result<Option<Errno>, VfsError> {
        self.file(ino)?;
        if let Some(path) = self.path_of(ino) {
            let data = backing::read_range(&self.root.join(path), offset, len)?;
            self.on_write(ino, offset, &data)?;
        }
        self.on_fsync(ino)
    }

    /// `sync` or `syncfs`: everything becomes durable (file data only
    /// pretends to under `lying_fsync`). Never faulted.
    pub fn on_sync_all(&mut self) {
        let persist = !self.config.lying_fsync;
        for file in self.files.values_mut() {
            file.sync(persist);
        }
        self.dirlog.sync_all(&mut self.durable);
    }

    /// Asked before performing a write to `ino`: the errno it must fail with
    /// (then the write is not performed and not reported), or `None`.
    pub fn write_fault(&mut self, ino: Ino) -> Option<Errno> {
        self.draw_fault(ino, FaultKind::Write)
    }

    /// Plans one failure: the next fsync of a path under `prefix` ("" for
    /// any) fails with EIO, dropping the dirty data.
    pub fn inject_fsync_error(&mut self, prefix: impl Into<PathBuf>) {
        self.planned
            .add(FaultKind::Fsync, prefix.into(), Errno::EIO);
    }

    /// Plans one failure: the next write to a path under `prefix` fails with `errno`.
    pub fn inject_write_error(&mut self, prefix: impl Into<PathBuf>, errno: Errno) {
        self.planned.add(FaultKind::Write, prefix.into(), errno);
    }

    /// Power cut, after every process of the node was killed: decides (per
    /// the crash model and seed) what survives, rewrites the backing folder
    /// to exactly that, and makes it the durable and current state. Surviving
    /// inodes keep their numbers, the others become unknown; open fds must
    /// not outlive this.
    pub fn crash(&mut self) -> Result<CrashReport, VfsError> {
        let permissions = backing::permissions(&self.root, &self.current.walk());
        let mut tree = self.durable.clone();
        let keep = plan_dirs(
            self.config.crash_model,
            &mut self.crash_rng,
            self.dirlog.count(),
        );
        let dir_ops = self.dirlog.commit_prefix(keep, &mut tree);
        let dropped_entries = self.lose_dir_entries(&mut tree)?;

        let mut paths: BTreeMap<Ino, PathBuf> = BTreeMap::new();
        for (path, ino) in tree.walk() {
            paths.entry(ino).or_insert(path);
        }
        let reachable: BTreeSet<Ino> = paths.keys().copied().collect();
        tree.retain_dirs(&reachable);
        self.files.retain(|ino, _| reachable.contains(ino));

        let candidates = self
            .files
            .iter()
            .filter(|(_, file)| file.is_dirty())
            .map(|(&ino, file)| (ino, file.candidates()))
            .collect();
        let cuts = plan_data(&self.config, &mut self.crash_rng, &candidates);
        let mut files = Vec::with_capacity(cuts.len());
        for (ino, cut) in cuts {
            let path = paths[&ino].clone();
            files.push(self.file_mut(ino)?.crash(cut, ino, path));
        }

        backing::rebuild(&self.root, &tree, &self.files, &permissions)?;
        self.current = tree.clone();
        self.durable = tree;
        Ok(CrashReport {
            model: self.config.crash_model,
            files,
            dir_ops,
            dropped_entries,
        })
    }

    /// The `lose_dir_entries` bug switch: empties those directories in the
    /// surviving tree and returns the dropped paths.
    fn lose_dir_entries(&self, tree: &mut Tree) -> Result<Vec<PathBuf>, VfsError> {
        let mut dropped = Vec::new();
        for dir in &self.config.lose_dir_entries {
            let Some(ino) = tree.resolve(&components(dir)?) else {
                continue;
            };
            if tree.is_dir(ino) {
                dropped.extend(
                    tree.take_entries(ino)
                        .into_iter()
                        .map(|name| dir.join(name)),
                );
            }
        }
        Ok(dropped)
    }

    /// Planned failures first (they need the path), then the seeded odds.
    fn draw_fault(&mut self, ino: Ino, kind: FaultKind) -> Option<Errno> {
        if kind == FaultKind::Write && self.config.full {
            return Some(Errno::ENOSPC);
        }
        let path = self.planned.has(kind).then(|| self.path_of(ino)).flatten();
        let planned = path.and_then(|path| self.planned.take(kind, &path));
        let odds = match kind {
            FaultKind::Fsync => vec![(self.config.fsync_eio_probability, Errno::EIO)],
            FaultKind::Write => vec![
                (self.config.write_enospc_probability, Errno::ENOSPC),
                (self.config.write_eio_probability, Errno::EIO),
            ],
        };
        planned.or_else(|| roll(&mut self.fault_rng, &odds))
    }

    /// Applies a namespace operation to the current tree and logs it as unsynced.
    fn change(&mut self, op: DirOp, changes: Vec<Change>) {
        for change in &changes {
            change.apply(&mut self.current);
        }
        self.dirlog.record(op, changes);
    }

    /// Logs a data change of a file as unsynced.
    fn record(&mut self, ino: Ino, op: DataOp) -> Result<(), VfsError> {
        let seq = self.next_seq;
        self.file_mut(ino)?.record(seq, op);
        self.next_seq += 1;
        Ok(())
    }

    /// The directory that holds `path`'s entry, and the entry's name.
    fn parent_of<'p>(&self, path: &'p Path) -> Result<(Ino, &'p OsStr), VfsError> {
        let mut names = components(path)?;
        let name = names
            .pop()
            .ok_or_else(|| VfsError::InvalidPath(path.into()))?;
        let dir = self
            .current
            .resolve(&names)
            .ok_or_else(|| VfsError::NotFound(path.into()))?;
        if !self.current.is_dir(dir) {
            return Err(VfsError::NotADirectory(path.into()));
        }
        Ok((dir, name))
    }

    /// Like [`Disk::parent_of`] for an entry that must exist, with its inode.
    fn entry_of<'p>(&self, path: &'p Path) -> Result<(Ino, &'p OsStr, Ino), VfsError> {
        let (dir, name) = self.parent_of(path)?;
        let ino = self
            .current
            .get(dir, name)
            .ok_or_else(|| VfsError::NotFound(path.into()))?;
        Ok((dir, name, ino))
    }

    fn file(&self, ino: Ino) -> Result<&FileData, VfsError> {
        self.files.get(&ino).ok_or(VfsError::UnknownInode(ino))
    }

    pub(crate) fn file_mut(&mut self, ino: Ino) -> Result<&mut FileData, VfsError> {
        self.files.get_mut(&ino).ok_or(VfsError::UnknownInode(ino))
    }

    fn alloc_ino(&mut self) -> Ino {
        let ino = Ino(self.next_ino);
        self.next_ino += 1;
        ino
    }
}

/// One of the disk's independent random streams for `seed`.
fn rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}
