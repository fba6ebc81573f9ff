//! The fixed-length paths a seed hands its nodes ({node_dir}, {history}).

use std::path::{Path, PathBuf};

/// Paths handed to the nodes, as symlinks of one fixed length: a path in the
/// environment or the arguments moves the initial stack (and so addresses
/// a program may print) by its length, and the artifacts directory must not
/// change a run. Removed when the seed ends.
#[derive(Default)]
pub struct StableLinks(Vec<PathBuf>);

impl StableLinks {
    /// A link `/tmp/faultline-links/<16 hex>-<suffix>` to `target`.
    pub fn add(&mut self, target: &Path, suffix: &str) -> Result<String, String> {
        let target = std::path::absolute(target).map_err(|e| e.to_string())?;
        let digest = crate::sim::trace::hash_bytes(target.as_os_str().as_encoded_bytes());
        let dir = PathBuf::from("/tmp/faultline-links");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let link = dir.join(format!("{digest:016x}-{suffix}"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link)
            .map_err(|e| format!("{}: {e}", link.display()))?;
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
