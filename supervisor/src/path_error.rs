//! A file faultline could not read, write or parse, with its path: most of
//! faultline's own failures are about one file, and the message must name it.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// An I/O or JSON error on one file; prints `PATH: why`.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The OS refused to read or write it.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// It is not the JSON expected.
    #[error("{path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// What serde_json said.
        source: serde_json::Error,
    },
}

impl PathError {
    /// For `map_err`: an I/O error on `path`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PathError + '_ {
        move |source| PathError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The JSON document in the file at `path`.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, PathError> {
    let text = std::fs::read_to_string(path).map_err(PathError::io(path))?;
    serde_json::from_str(&text).map_err(|source| PathError::Json {
        path: path.to_path_buf(),
        source,
    })
}
