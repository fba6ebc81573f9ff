//! A stand-in for the supervisor: real file operations on a temp dir, each
//! reported to a `Disk`, with open handles kept per inode like fds.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use tempfile::TempDir;
use vfs::{CrashModel, CrashReport, Disk, DiskConfig, Errno, Ino};

/// A disk over a temp dir plus the "fds" open on it.
pub struct Sim {
    _dir: TempDir,
    pub disk: Disk,
    open: BTreeMap<Ino, File>,
}

/// What the backing folder holds: each path with its bytes (`None` for a directory).
pub type Snapshot = BTreeMap<PathBuf, Option<Vec<u8>>>;

impl Sim {
    pub fn new(seed: u64, config: DiskConfig) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        Sim::over(dir, seed, config)
    }

    /// A disk over a folder that already holds files.
    pub fn over(dir: TempDir, seed: u64, config: DiskConfig) -> Sim {
        let disk = Disk::with_config(dir.path().join("data"), seed, config).unwrap();
        Sim {
            _dir: dir,
            disk,
            open: BTreeMap::new(),
        }
    }

    pub fn strict() -> Sim {
        Sim::new(0, model(CrashModel::LoseAll))
    }

    pub fn host(&self, path: &str) -> PathBuf {
        self.disk.root().join(path)
    }

    pub fn create(&mut self, path: &str) -> Ino {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(self.host(path))
            .unwrap();
        let ino = self.disk.on_create(path).unwrap();
        self.open.insert(ino, file);
        ino
    }

    pub fn mkdir(&mut self, path: &str) {
        fs::create_dir(self.host(path)).unwrap();
        self.disk.on_mkdir(path).unwrap();
    }

    pub fn write(&mut self, ino: Ino, offset: u64, data: &[u8]) {
        self.open[&ino].write_all_at(data, offset).unwrap();
        self.disk.on_write(ino, offset, data).unwrap();
    }

    pub fn append(&mut self, ino: Ino, data: &[u8]) {
        let end = self.disk.file_len(ino).unwrap();
        assert_eq!(end, self.open[&ino].metadata().unwrap().len());
        self.write(ino, end, data);
    }

    pub fn truncate(&mut self, ino: Ino, len: u64) {
        self.open[&ino].set_len(len).unwrap();
        self.disk.on_truncate(ino, len).unwrap();
    }

    pub fn fsync(&mut self, ino: Ino) -> Option<Errno> {
        self.disk.on_fsync(ino).unwrap()
    }

    /// fsync of a directory ("" is the root).
    pub fn fsync_dir(&mut self, path: &str) -> Option<Errno> {
        let ino = self.disk.lookup(path).unwrap();
        self.disk.on_fsync(ino).unwrap()
    }

    /// A file created, written and fsynced, with its directory fsynced.
    pub fn durable_file(&mut self, path: &str, data: &[u8]) -> Ino {
        let ino = self.create(path);
        self.write(ino, 0, data);
        assert_eq!(self.fsync(ino), None);
        let parent = Path::new(path).parent().unwrap().to_str().unwrap();
        assert_eq!(self.fsync_dir(parent), None);
        ino
    }

    pub fn rename(&mut self, from: &str, to: &str) {
        fs::rename(self.host(from), self.host(to)).unwrap();
        self.disk.on_rename(from, to).unwrap();
    }

    pub fn unlink(&mut self, path: &str) {
        fs::remove_file(self.host(path)).unwrap();
        self.disk.on_unlink(path).unwrap();
    }

    pub fn link(&mut self, existing: &str, new: &str) {
        fs::hard_link(self.host(existing), self.host(new)).unwrap();
        self.disk.on_link(existing, new).unwrap();
    }

    pub fn rmdir(&mut self, path: &str) {
        fs::remove_dir(self.host(path)).unwrap();
        self.disk.on_rmdir(path).unwrap();
    }

    /// Kills the "processes" (closes every fd) and crashes the disk.
    pub fn crash(&mut self) -> CrashReport {
        self.open.clear();
        self.disk.crash().unwrap()
    }

    pub fn read(&self, path: &str) -> Option<Vec<u8>> {
        fs::read(self.host(path)).ok()
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut out = Snapshot::new();
        walk(self.disk.root(), Path::new(""), &mut out);
        out
    }
}

fn walk(root: &Path, rel: &Path, out: &mut Snapshot) {
    for entry in fs::read_dir(root.join(rel)).unwrap() {
        let entry = entry.unwrap();
        let child = rel.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            out.insert(child.clone(), None);
            walk(root, &child, out);
        } else {
            out.insert(child, Some(fs::read(entry.path()).unwrap()));
        }
    }
}

pub fn model(crash_model: CrashModel) -> DiskConfig {
    DiskConfig {
        crash_model,
        ..DiskConfig::default()
    }
}

pub fn seeded() -> DiskConfig {
    DiskConfig::default()
}

/// `len` bytes of `byte`.
pub fn bytes(byte: u8, len: usize) -> Vec<u8> {
    vec![byte; len]
}
