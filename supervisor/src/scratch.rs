//! A directory for one unit test's files, under the temporary folder,
//! removed when the test drops it (passing or failing), so runs of the
//! suite leave nothing behind.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// An empty directory named by a label and the test process's pid; removed on drop.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `<temp>/<label>-<pid>`, emptied first.
    pub fn new(label: &str) -> ScratchDir {
        let dir = std::env::temp_dir().join(format!("{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        ScratchDir(dir)
    }
}

impl Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
