//! When each piece of a node's output was written, in virtual time. The
//! kernel writes a node's stdout and stderr (and the workload's history)
//! straight into the seed's files, so at every trapped write into one of
//! them faultline notes the virtual time, the writing node and the file's
//! length then, which is where the write lands. The timeline stamps each
//! line with it. None of this is in the trace: hashes do not change.

use std::os::fd::RawFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use serde::Serialize;

/// A file whose writes are noted.
struct Watched {
    /// The file, for files that may not exist yet (the history).
    path: Option<PathBuf>,
    /// Its device and inode, once known.
    id: Option<(u64, u64)>,
    /// What it is: "stdout", "stderr" or "history".
    stream: &'static str,
}

/// One noted write (a line of output.jsonl).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutputMark {
    /// Virtual ns of the write.
    pub t: u64,
    /// The node that wrote.
    pub node: String,
    /// "stdout", "stderr" or "history".
    pub stream: &'static str,
    /// The file's length before the write: the first byte it wrote.
    pub offset: u64,
}

/// The watched files and the writes noted so far.
#[derive(Default)]
pub struct OutputLog {
    watched: Vec<Watched>,
    marks: Vec<OutputMark>,
}

impl OutputLog {
    /// Watches the file open on the supervisor's descriptor `fd` (a node's
    /// captured stdout or stderr), if it is a regular file: pipes (`exec`)
    /// have no offsets to stamp.
    pub fn watch_fd(&mut self, fd: RawFd, stream: &'static str) {
        let meta = std::fs::metadata(format!("/proc/self/fd/{fd}"));
        if let Some(m) = meta.ok().filter(|m| m.is_file()) {
            self.add(Watched {
                path: None,
                id: Some((m.dev(), m.ino())),
                stream,
            });
        }
    }

    /// Watches the file at `path`, which a node may create later.
    pub fn watch_path(&mut self, path: PathBuf, stream: &'static str) {
        self.add(Watched {
            path: Some(path),
            id: None,
            stream,
        });
    }

    fn add(&mut self, w: Watched) {
        let known = |o: &Watched| {
            (o.id.is_some() && o.id == w.id) || (o.path.is_some() && o.path == w.path)
        };
        if !self.watched.iter().any(known) {
            self.watched.push(w);
        }
    }

    /// At a trapped write of process `pid` to its descriptor `fd`: notes it
    /// if the descriptor is a watched file; `node` names the writer.
    pub fn on_write(&mut self, t: u64, pid: i32, fd: i32, node: impl FnOnce() -> String) {
        if self.watched.is_empty() {
            return;
        }
        let Ok(meta) = std::fs::metadata(format!("/proc/{pid}/fd/{fd}")) else {
            return;
        };
        if !meta.is_file() {
            return;
        }
        let id = (meta.dev(), meta.ino());
        for w in &mut self.watched {
            if w.id.is_none() {
                w.id = w
                    .path
                    .as_ref()
                    .and_then(|p| std::fs::metadata(p).ok())
                    .map(|m| (m.dev(), m.ino()));
            }
        }
        if let Some(w) = self.watched.iter().find(|w| w.id == Some(id)) {
            self.marks.push(OutputMark {
                t,
                node: node(),
                stream: w.stream,
                offset: meta.len(),
            });
        }
    }

    /// The writes noted, in the order they happened.
    pub fn into_marks(self) -> Vec<OutputMark> {
        self.marks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn notes_writes_to_watched_files_only_with_their_offsets() {
        let dir = std::env::temp_dir().join(format!("output-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut out = std::fs::File::create(dir.join("n.stdout")).unwrap();
        let history = dir.join("history.jsonl");
        let _ = std::fs::remove_file(&history);
        let mut log = OutputLog::default();
        log.watch_fd(out.as_raw_fd(), "stdout");
        log.watch_path(history.clone(), "history");
        let me = std::process::id() as i32;
        // Noted at the trap, before the kernel writes.
        log.on_write(6, me, out.as_raw_fd(), || "n".into());
        out.write_all(b"one\n").unwrap();
        log.on_write(7, me, out.as_raw_fd(), || "n".into());
        let other = std::fs::File::create(dir.join("other")).unwrap();
        log.on_write(8, me, other.as_raw_fd(), || "n".into());
        let h = std::fs::File::create(&history).unwrap();
        log.on_write(9, me, h.as_raw_fd(), || "c".into());
        let marks = log.into_marks();
        assert_eq!(
            marks,
            [
                OutputMark {
                    t: 6,
                    node: "n".into(),
                    stream: "stdout",
                    offset: 0
                },
                OutputMark {
                    t: 7,
                    node: "n".into(),
                    stream: "stdout",
                    offset: 4
                },
                OutputMark {
                    t: 9,
                    node: "c".into(),
                    stream: "history",
                    offset: 0
                },
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
