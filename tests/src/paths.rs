//! Where things live: the workspace, its target directory, the faultline
//! binary and per-test scratch directories.

use std::env;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The cargo workspace root (the parent of this crate's directory).
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e crate lives inside the workspace")
}

/// The cargo target directory: `$CARGO_TARGET_DIR` (relative to the workspace
/// root if relative) or `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// The faultline binary under test: `$FAULTLINE_BIN` (relative to the
/// workspace root if relative), or the release build
/// `<target>/release/faultline`.
pub fn faultline_bin() -> PathBuf {
    match env::var_os("FAULTLINE_BIN") {
        Some(bin) => workspace_root().join(bin),
        None => target_dir().join("release").join("faultline"),
    }
}

/// A fresh, empty directory under `<target>/e2e-scratch/` whose name starts
/// with `label` and is unique to this process and call.
pub fn scratch_dir(label: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = target_dir()
        .join("e2e-scratch")
        .join(format!("{label}-{}-{n}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot clear {}: {e}", dir.display()));
    }
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}
