//! Directory trees of inodes: the current tree mirrors the backing folder,
//! the durable tree is what a crash would find. Inodes (not paths) identify
//! files so renames, hard links and unlinked-but-open files stay exact.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::VfsError;

/// Identity of a file or directory on the simulated disk. It survives renames
/// and unlinks, so the supervisor should map each open fd to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Ino(pub(crate) u64);

impl Ino {
    /// The disk root directory.
    pub(crate) const ROOT: Ino = Ino(0);

    /// Its number: assigned in creation order (the root is 0), so the same
    /// run of a program gives every file the same number, which the
    /// supervisor shows as the file's inode number.
    pub fn number(self) -> u64 {
        self.0
    }
}

/// Splits a path relative to the disk root into names, rejecting anything
/// that could leave the root.
pub(crate) fn components(path: &Path) -> Result<Vec<&OsStr>, VfsError> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(Ok(name)),
            Component::CurDir => None,
            _ => Some(Err(VfsError::InvalidPath(path.to_path_buf()))),
        })
        .collect()
}

/// Entries of every directory. Every directory inode has a map here (empty
/// until it gets entries), which is how the tree tells directories from files.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    dirs: BTreeMap<Ino, BTreeMap<OsString, Ino>>,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            dirs: BTreeMap::from([(Ino::ROOT, BTreeMap::new())]),
        }
    }
}

impl Tree {
    /// Registers a directory inode (no entry points to it yet).
    pub fn add_dir(&mut self, ino: Ino) {
        self.dirs.entry(ino).or_default();
    }

    /// Whether the inode is a directory.
    pub fn is_dir(&self, ino: Ino) -> bool {
        self.dirs.contains_key(&ino)
    }

    /// Whether the directory has no entries.
    pub fn is_empty_dir(&self, ino: Ino) -> bool {
        self.dirs.get(&ino).is_none_or(BTreeMap::is_empty)
    }

    /// The inode `name` refers to in `dir`.
    pub fn get(&self, dir: Ino, name: &OsStr) -> Option<Ino> {
        self.dirs.get(&dir)?.get(name).copied()
    }

    /// Points `name` in `dir` at `target`, or removes it for `None`.
    pub fn set(&mut self, dir: Ino, name: &OsStr, target: Option<Ino>) {
        let entries = self.dirs.entry(dir).or_default();
        match target {
            Some(ino) => entries.insert(name.to_owned(), ino),
            None => entries.remove(name),
        };
    }

    /// Removes all entries of `dir`, returning their names.
    pub fn take_entries(&mut self, dir: Ino) -> Vec<OsString> {
        self.dirs
            .get_mut(&dir)
            .map(|entries| std::mem::take(entries).into_keys().collect())
            .unwrap_or_default()
    }

    /// The inode at a path given as names from the root.
    pub fn resolve(&self, names: &[&OsStr]) -> Option<Ino> {
        names
            .iter()
            .try_fold(Ino::ROOT, |dir, name| self.get(dir, name))
    }

    /// Every entry reachable from the root, parents before children, in name
    /// order. A directory reachable twice (a durable tree stitched together
    /// from partial directory syncs can be that odd) is listed once.
    pub fn walk(&self) -> Vec<(PathBuf, Ino)> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::from([Ino::ROOT]);
        self.walk_dir(Ino::ROOT, &PathBuf::new(), &mut seen, &mut out);
        out
    }

    fn walk_dir(
        &self,
        dir: Ino,
        path: &Path,
        seen: &mut BTreeSet<Ino>,
        out: &mut Vec<(PathBuf, Ino)>,
    ) {
        for (name, &ino) in self.dirs.get(&dir).into_iter().flatten() {
            let child = path.join(name);
            if !self.is_dir(ino) {
                out.push((child, ino));
            } else if seen.insert(ino) {
                out.push((child.clone(), ino));
                self.walk_dir(ino, &child, seen, out);
            }
        }
    }

    /// Forgets directories not in `reachable`, after a crash made them garbage.
    pub fn retain_dirs(&mut self, reachable: &BTreeSet<Ino>) {
        self.dirs
            .retain(|ino, _| *ino == Ino::ROOT || reachable.contains(ino));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_reject_escapes() {
        assert!(components(Path::new("/etc")).is_err());
        assert!(components(Path::new("a/../b")).is_err());
        assert_eq!(components(Path::new("./a/b")).unwrap(), ["a", "b"]);
    }

    #[test]
    fn walk_survives_directory_cycles() {
        let mut tree = Tree::default();
        let (a, b) = (Ino(1), Ino(2));
        tree.add_dir(a);
        tree.add_dir(b);
        tree.set(Ino::ROOT, OsStr::new("a"), Some(a));
        tree.set(a, OsStr::new("b"), Some(b));
        tree.set(b, OsStr::new("a"), Some(a));
        let paths: Vec<_> = tree.walk().into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, [PathBuf::from("a"), PathBuf::from("a/b")]);
    }
}
