//! File identities and times as `stat` shows them. The host's inode and
//! device numbers of files made during a run, and every file's access,
//! change and modification times, differ from run to run; programs store
//! them (a version-control index does). Here a file on a node's simulated
//! disk has its vfs inode number, a device number of its disk, and the
//! virtual time of its last change; every other file has numbers handed out
//! in the order the run first looks at it and a fixed time. Also what the
//! exit of a stat or getdents call (`sys::stat`, `sys::dirents`) needs to
//! know to show them.

use crate::hashing::HashMap;
use std::path::PathBuf;

use super::vclock::NS;

/// The time every file that was not changed on a simulated disk during the
/// run shows: 2024-01-01T00:00:00Z.
pub const FIXED_TIME_NS: i128 = 1_704_067_200 * NS as i128;

/// Major device number of the simulated disks (minor: disk index + 1).
const DISK_MAJOR: u32 = 0xfd;
/// Major device number other file systems show (minor: order first seen).
const OTHER_MAJOR: u32 = 0xfc;
/// Inode numbers of files not on a simulated disk start here.
const OTHER_INO_BASE: u64 = 1 << 20;
/// vfs numbers its root 0; shown inodes start at 2, like ext4's root.
const DISK_INO_BASE: u64 = 2;

/// What `stat` shows of a file's identity and times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// Device number (major, minor).
    pub dev: (u32, u32),
    /// Inode number.
    pub ino: u64,
    /// Access, change and modification time, ns since the Unix epoch.
    pub time_ns: i128,
}

/// The identities handed out in one run.
#[derive(Debug, Default)]
pub struct FileIds {
    /// (disk, vfs inode number) → realtime of its last change.
    changed: HashMap<(usize, u64), i128>,
    /// Host (device, inode) → shown inode number.
    host_inos: HashMap<(u64, u64), u64>,
    /// Host device → shown minor number.
    host_devs: HashMap<u64, u32>,
}

impl FileIds {
    /// A file or directory of disk `disk` changed at realtime `now_ns`.
    pub fn touch(&mut self, disk: usize, ino: vfs::Ino, now_ns: i128) {
        self.changed.insert((disk, ino.number()), now_ns);
    }

    /// The identity of file `ino` of simulated disk `disk`.
    pub fn on_disk(&self, disk: usize, ino: vfs::Ino) -> Identity {
        Identity {
            dev: (DISK_MAJOR, disk as u32 + 1),
            ino: DISK_INO_BASE + ino.number(),
            time_ns: self
                .changed
                .get(&(disk, ino.number()))
                .copied()
                .unwrap_or(FIXED_TIME_NS),
        }
    }

    /// The identity of a file elsewhere, by its host device and inode.
    pub fn elsewhere(&mut self, host_dev: u64, host_ino: u64) -> Identity {
        let next_dev = self.host_devs.len() as u32 + 1;
        let minor = *self.host_devs.entry(host_dev).or_insert(next_dev);
        let next_ino = OTHER_INO_BASE + self.host_inos.len() as u64;
        let ino = *self
            .host_inos
            .entry((host_dev, host_ino))
            .or_insert(next_ino);
        Identity {
            dev: (OTHER_MAJOR, minor),
            ino,
            time_ns: FIXED_TIME_NS,
        }
    }
}

/// Which struct the kernel fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatLayout {
    /// `struct stat` (stat, fstat, lstat, newfstatat).
    Stat,
    /// `struct statx`.
    Statx,
}

/// The file a stat call asks about, if it is on a simulated disk.
#[derive(Debug, Clone)]
pub enum DiskFile {
    /// An open descriptor of it.
    Ino(usize, vfs::Ino),
    /// A path on it, relative to the disk root (looked up at the exit).
    Path(usize, PathBuf),
}

/// What the exit needs to know of the listed directory.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The caller's buffer.
    pub buf: u64,
    /// `struct linux_dirent64` (getdents64) or the old `linux_dirent`.
    pub wide: bool,
    /// The host device of the directory (entries of other file systems
    /// mounted inside it keep that device's numbering).
    pub host_dev: u64,
    /// The directory's disk and path on it, if it is on a simulated disk.
    pub disk: Option<(usize, PathBuf)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_files_are_numbered_in_the_order_first_seen() {
        let mut ids = FileIds::default();
        let a = ids.elsewhere(7, 1234);
        let b = ids.elsewhere(9, 99);
        assert_eq!(
            (a.dev, a.ino, a.time_ns),
            ((0xfc, 1), 1 << 20, FIXED_TIME_NS)
        );
        assert_eq!((b.dev, b.ino), ((0xfc, 2), (1 << 20) + 1));
        assert_eq!(
            ids.elsewhere(7, 1234),
            a,
            "the same file, the same identity"
        );
    }
}
