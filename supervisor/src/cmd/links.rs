//! The fixed-length paths a seed hands its nodes ({node_dir}, {history}).

use std::path::{Path, PathBuf};

use crate::path_error::PathError;

/// Why a link could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The target has no absolute path (no working directory).
    #[error(transparent)]
    Absolute(std::io::Error),
    /// The links' directory or the link cannot be created.
    #[error(transparent)]
    Create(#[from] PathError),
}

/// Paths handed to the nodes, as symlinks of one fixed length: a path in the
/// environment or the arguments moves the initial stack (and so addresses
/// a program may print) by its length, and the artifacts directory must not
/// change a run. Removed when the seed ends.
#[derive(Default)]
pub struct StableLinks(Vec<PathBuf>);

impl StableLinks {
    /// A link `/tmp/faultline-links/<16 hex>-<suffix>` to `target`.
    pub fn add(&mut self, target: &Path, suffix: &str) -> Result<String, LinkError> {
        let target = std::path::absolute(target).map_err(LinkError::Absolute)?;
        let digest = crate::sim::trace::hash_bytes(target.as_os_str().as_encoded_bytes());
        let dir = PathBuf::from("/tmp/faultline-links");
        std::fs::create_dir_all(&dir).map_err(PathError::io(&dir))?;
        let link = dir.join(format!("{digest:016x}-{suffix}"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).map_err(PathError::io(&link))?;
        self.0.push(link.clone());
        Ok(link.display().to_string())
    }
}

impl Drop for StableLinks {
    fn drop(&mut self) {
        for link in &self.0 {
            let _ = std::fs::remove_file(link);
        }
    }
}
