//! The backing folder on the host: reading the state found when a disk is
//! opened, and rewriting it to exactly the surviving state after a crash.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, Permissions};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::content::Content;
use crate::data::FileData;
use crate::namespace::Tree;
use crate::{Ino, VfsError};

/// The model of a folder as found: everything in it counts as durable.
pub(crate) struct Scanned {
    pub tree: Tree,
    pub files: BTreeMap<Ino, FileData>,
    /// First inode number not used by the scan.
    pub next_ino: u64,
}

/// Reads the folder at `root`, keeping hard links as shared inodes.
pub(crate) fn scan(root: &Path) -> Result<Scanned, VfsError> {
    let mut scan = Scan {
        found: Scanned {
            tree: Tree::default(),
            files: BTreeMap::new(),
            next_ino: Ino::ROOT.0 + 1,
        },
        host_inodes: HashMap::new(),
    };
    scan.dir(root, Ino::ROOT)?;
    Ok(scan.found)
}

struct Scan {
    found: Scanned,
    /// Host (device, inode) to model inode, so hard links stay links.
    host_inodes: HashMap<(u64, u64), Ino>,
}

impl Scan {
    fn dir(&mut self, path: &Path, dir: Ino) -> Result<(), VfsError> {
        let mut entries = fs::read_dir(path)
            .and_then(|entries| entries.collect::<Result<Vec<_>, _>>())
            .map_err(VfsError::io(path))?;
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let child = entry.path();
            let meta = fs::symlink_metadata(&child).map_err(VfsError::io(&child))?;
            let ino = match self.host_inodes.get(&(meta.dev(), meta.ino())) {
                Some(&ino) => ino,
                None => {
                    let ino = Ino(self.found.next_ino);
                    self.found.next_ino += 1;
                    if meta.is_dir() {
                        self.found.tree.add_dir(ino);
                        self.dir(&child, ino)?;
                    } else if meta.is_file() {
                        let content = Content::load(&child).map_err(VfsError::io(&child))?;
                        self.found.files.insert(ino, FileData::durable(content));
                    } else {
                        return Err(VfsError::Unsupported(child));
                    }
                    self.host_inodes.insert((meta.dev(), meta.ino()), ino);
                    ino
                }
            };
            self.found.tree.set(dir, &entry.file_name(), Some(ino));
        }
        Ok(())
    }
}

/// Permissions of the entries at `paths`, to restore after a rebuild. Best
/// effort: an entry missing on the host simply gets default permissions.
pub(crate) fn permissions(root: &Path, paths: &[(PathBuf, Ino)]) -> BTreeMap<Ino, Permissions> {
    paths
        .iter()
        .filter_map(|(path, ino)| {
            let meta = fs::symlink_metadata(root.join(path)).ok()?;
            Some((*ino, meta.permissions()))
        })
        .collect()
}

/// Replaces everything under `root` with the durable contents of `tree`.
pub(crate) fn rebuild(
    root: &Path,
    tree: &Tree,
    files: &BTreeMap<Ino, FileData>,
    permissions: &BTreeMap<Ino, Permissions>,
) -> Result<(), VfsError> {
    clear(root)?;
    let entries = tree.walk();
    let mut placed: BTreeMap<Ino, PathBuf> = BTreeMap::new();
    for (rel, ino) in &entries {
        let path = root.join(rel);
        let made = if tree.is_dir(*ino) {
            fs::create_dir(&path)
        } else if let Some(first) = placed.get(ino) {
            fs::hard_link(first, &path)
        } else {
            let file = files.get(ino).ok_or(VfsError::UnknownInode(*ino))?;
            placed.insert(*ino, path.clone());
            file.durable_content().store(&path)
        };
        made.map_err(VfsError::io(&path))?;
    }
    // Children first, so a read-only directory does not block its own restore.
    for (rel, ino) in entries.iter().rev() {
        if let Some(perm) = permissions.get(ino) {
            let path = root.join(rel);
            fs::set_permissions(&path, perm.clone()).map_err(VfsError::io(&path))?;
        }
    }
    Ok(())
}

/// Removes every entry under `root`, keeping `root` itself (it may be a mount point).
fn clear(root: &Path) -> Result<(), VfsError> {
    for entry in fs::read_dir(root).map_err(VfsError::io(root))? {
        let path = entry.map_err(VfsError::io(root))?.path();
        let meta = fs::symlink_metadata(&path).map_err(VfsError::io(&path))?;
        let removed = if meta.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(VfsError::io(&path))?;
    }
    Ok(())
}

/// Reads up to `len` bytes at `offset` from a host file (fewer at its end).
pub(crate) fn read_range(path: &Path, offset: u64, len: u64) -> Result<Vec<u8>, VfsError> {
    let file = File::open(path).map_err(VfsError::io(path))?;
    let size = file.metadata().map_err(VfsError::io(path))?.len();
    let mut data = vec![0; len.min(size.saturating_sub(offset)) as usize];
    file.read_exact_at(&mut data, offset)
        .map_err(VfsError::io(path))?;
    Ok(data)
}
