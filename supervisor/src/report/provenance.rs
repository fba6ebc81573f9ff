//! What a run was made of, beyond the scenario and the flags: the SHA-256 of
//! every program a node runs and faultline's own version. A replay that
//! differs after a fix is expected to differ; these say which file changed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::path_error::PathError;

/// faultline's version, as `faultline --version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The hex SHA-256 of a file's contents.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Absolute path → SHA-256 of each program, each file read once however
/// many nodes run it (a cluster's members share one binary of tens of MB).
pub fn hash_binaries<'a>(
    programs: impl IntoIterator<Item = &'a Path>,
) -> Result<BTreeMap<String, String>, PathError> {
    let paths = programs
        .into_iter()
        .map(|p| std::path::absolute(p).map_err(PathError::io(p)))
        .collect::<Result<std::collections::BTreeSet<_>, _>>()?;
    paths
        .into_iter()
        .map(|path| {
            let sha = sha256_file(&path).map_err(PathError::io(&path))?;
            Ok((path.display().to_string(), sha))
        })
        .collect()
}

/// One line per program whose contents differ from (or that is missing
/// since) the recorded run, naming the file.
pub fn changed_binaries(recorded: &BTreeMap<String, String>) -> Vec<String> {
    recorded
        .iter()
        .filter_map(|(path, sha)| match sha256_file(Path::new(path)) {
            Ok(now) if &now == sha => None,
            Ok(now) => Some(format!(
                "{path} changed since the recorded run (sha256 {}…, now {}…)",
                &sha[..12.min(sha.len())],
                &now[..12]
            )),
            Err(e) => Some(format!("{path} cannot be read any more: {e}")),
        })
        .collect()
}
