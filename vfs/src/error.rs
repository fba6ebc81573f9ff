//! Errors of the disk model. Notifications arrive after the real syscall
//! succeeded, so most of these mean the model and the backing folder diverged
//! (an unreported operation or a supervisor bug) and are worth surfacing.

use std::io;
use std::path::{Path, PathBuf};

use crate::Ino;

/// Why a notification or a crash could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum VfsError {
    /// The path is absolute or climbs with `..`; paths must be relative to the disk root.
    #[error("{0:?} is not a plain path relative to the disk root")]
    InvalidPath(PathBuf),
    /// The path (or its parent directory) is not on the simulated disk.
    #[error("{0:?} does not exist on the simulated disk")]
    NotFound(PathBuf),
    /// A directory or link target that must be new already exists.
    #[error("{0:?} already exists on the simulated disk")]
    AlreadyExists(PathBuf),
    /// A directory was needed but the entry is a file.
    #[error("{0:?} is not a directory")]
    NotADirectory(PathBuf),
    /// A file was needed but the entry is a directory.
    #[error("{0:?} is a directory")]
    IsADirectory(PathBuf),
    /// A directory to remove or replace still has entries.
    #[error("directory {0:?} is not empty")]
    NotEmpty(PathBuf),
    /// The inode is not on the disk (any more), or is not a regular file where one is needed.
    #[error("inode {0:?} is not known to the disk, or is not a regular file")]
    UnknownInode(Ino),
    /// The backing folder holds something other than regular files and directories.
    #[error("{0:?} is neither a regular file nor a directory")]
    Unsupported(PathBuf),
    /// Reading or rebuilding the backing folder failed.
    #[error("backing file {path:?}: {source}")]
    Io {
        /// The host path that failed.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl VfsError {
    /// Wraps an I/O error with the host path it concerns, for `map_err`.
    pub(crate) fn io(path: &Path) -> impl FnOnce(io::Error) -> VfsError + '_ {
        move |source| VfsError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
