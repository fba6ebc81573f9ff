//! The simulated disks of the nodes: each node's `data_dir` is a folder of the
//! seed's artifacts, bind-mounted at the path the program asked for in the
//! node's private mount namespace; vfs records what is durable on it and
//! applies the crash model to the folder.

use std::path::{Component, Path, PathBuf};

use vnet::HostId;

/// One node's disk.
pub struct NodeDisk {
    /// The node's name, for the fault log.
    pub node: String,
    /// The node's host.
    pub host: HostId,
    /// The path the program sees the disk at (its `data_dir`).
    pub visible: PathBuf,
    /// The durability model.
    pub disk: vfs::Disk,
    /// Its size in bytes (`[disk] size`), for `statfs`.
    pub size: u64,
}

/// A call on a simulated disk that vfs failed (a planned fsync or write
/// error), for the fault log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedDiskCall {
    /// The node whose disk it is.
    pub node: String,
    /// The file's path as the program sees it.
    pub path: String,
    /// The call's name.
    pub call: String,
    /// The error it got.
    pub errno: vfs::Errno,
}

/// Every node's disk, indexed by position.
#[derive(Default)]
pub struct Disks {
    list: Vec<NodeDisk>,
}

impl Disks {
    /// Adds a disk; returns its index.
    pub fn add(&mut self, d: NodeDisk) -> usize {
        self.list.push(d);
        self.list.len() - 1
    }

    /// The disk of `host`, if it has one.
    pub fn of_host(&self, host: HostId) -> Option<usize> {
        self.list.iter().position(|d| d.host == host)
    }

    /// Disk `i`.
    pub fn get_mut(&mut self, i: usize) -> &mut NodeDisk {
        &mut self.list[i]
    }

    /// Disk `i`.
    pub fn get(&self, i: usize) -> &NodeDisk {
        &self.list[i]
    }

    /// Every disk, for sync(2).
    pub fn all_mut(&mut self) -> impl Iterator<Item = &mut NodeDisk> {
        self.list.iter_mut()
    }
}

/// Removes `.` and resolves `..` without touching the filesystem.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;
    use std::path::Path;

    #[test]
    fn normalizes_lexically() {
        assert_eq!(
            normalize(Path::new("/data/./wal/../snap/x")),
            Path::new("/data/snap/x")
        );
    }
}
