//! Bit rot: bytes of synced data change on the medium. The flip lands in
//! the durable copy (so a later crash keeps it) and in the backing file
//! (what the program reads next).

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::{Disk, VfsError};

/// One flipped byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flip {
    /// The file, relative to the disk root.
    pub path: PathBuf,
    /// Where in it.
    pub offset: u64,
    /// The bits flipped (never 0).
    pub mask: u8,
}

impl Disk {
    /// Flips `bytes` seeded bytes of durable data, each in a seeded file
    /// among those whose path relative to the root matches `glob` (`*` and
    /// `?` within one path component) and that hold durable data.
    pub fn corrupt(
        &mut self,
        glob: &str,
        bytes: u32,
        rng: &mut ChaCha8Rng,
    ) -> Result<Vec<Flip>, VfsError> {
        let targets: Vec<(PathBuf, crate::Ino, u64)> = self
            .current
            .walk()
            .into_iter()
            .filter(|(path, _)| glob_match(glob, path))
            .filter_map(|(path, ino)| {
                let len = self.files.get(&ino)?.durable_content().len();
                (len > 0).then_some((path, ino, len))
            })
            .collect();
        let mut flips = Vec::new();
        if targets.is_empty() {
            return Ok(flips);
        }
        for _ in 0..bytes {
            let (path, ino, len) = targets[rng.gen_range(0..targets.len())].clone();
            let offset = rng.gen_range(0..len);
            let mask: u8 = rng.gen_range(1..=255);
            let durable = self.file_mut(ino)?.durable_mut();
            let old = durable.byte(offset);
            durable.write(offset, &[old ^ mask]);
            let host = self.root.join(&path);
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&host)
                .map_err(VfsError::io(&host))?;
            let mut cur = [0u8];
            if file
                .read_at(&mut cur, offset)
                .map_err(VfsError::io(&host))?
                == 1
            {
                file.write_all_at(&[cur[0] ^ mask], offset)
                    .map_err(VfsError::io(&host))?;
            }
            flips.push(Flip { path, offset, mask });
        }
        Ok(flips)
    }
}

/// Matches a relative path against a glob component by component.
fn glob_match(glob: &str, path: &Path) -> bool {
    let parts: Vec<&str> = glob.split('/').filter(|c| !c.is_empty()).collect();
    let names: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.len() == names.len()
        && parts
            .iter()
            .zip(&names)
            .all(|(p, n)| component_match(p.as_bytes(), n.as_bytes()))
}

/// `*` (any run) and `?` (one byte) within a name.
fn component_match(p: &[u8], n: &[u8]) -> bool {
    match (p.first(), n.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            component_match(&p[1..], n) || (!n.is_empty() && component_match(p, &n[1..]))
        }
        (Some(b'?'), Some(_)) => component_match(&p[1..], &n[1..]),
        (Some(a), Some(b)) if a == b => component_match(&p[1..], &n[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn globs_match_within_components() {
        assert!(glob_match(
            "member/wal/*.wal",
            Path::new("member/wal/0001.wal")
        ));
        assert!(!glob_match(
            "member/wal/*.wal",
            Path::new("member/wal/x/0001.wal")
        ));
        assert!(glob_match("d?ta", Path::new("data")));
        assert!(!glob_match("*.wal", Path::new("a.snap")));
    }

    #[test]
    fn flips_synced_bytes_in_file_and_durable_copy() {
        let dir = std::env::temp_dir().join(format!("vfs-rot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut disk = Disk::new(&dir, 1).unwrap();
        let ino = disk.on_create("log").unwrap();
        std::fs::write(dir.join("log"), b"hello").unwrap();
        disk.on_write(ino, 0, b"hello").unwrap();
        disk.on_sync_all();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        assert!(disk.corrupt("*.wal", 1, &mut rng).unwrap().is_empty());
        let flips = disk.corrupt("l*", 1, &mut rng).unwrap();
        assert_eq!(flips.len(), 1);
        let now = std::fs::read(dir.join("log")).unwrap();
        assert_ne!(now, b"hello");
        // A crash keeps the rot: it is in the durable copy too.
        disk.crash().unwrap();
        assert_eq!(std::fs::read(dir.join("log")).unwrap(), now);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
