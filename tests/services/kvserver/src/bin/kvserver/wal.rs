//! The write-ahead log `DIR/wal.log`: one `key=value\n` line per put.
//!
//! Recovery never trusts the bytes it reads to be durable. A crash can tear
//! the last line at a sector boundary, and after an fsync error the kernel
//! may still show bytes that will never reach the disk (the process exited
//! but the node did not lose power). Appending behind either would make a
//! later, acknowledged line unreadable. So on start the valid prefix is
//! rewritten to `wal.log.tmp`, fsynced and renamed over `wal.log`, and the
//! directory is fsynced: from then on exactly what was replayed is durable.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use kvserver::protocol::{is_key, is_value};

const LOG: &str = "wal.log";
const TMP: &str = "wal.log.tmp";

/// The open log, positioned for appends (`O_APPEND`).
#[derive(Debug)]
pub struct Wal {
    file: File,
}

/// A log opened on start, with the puts it replayed, oldest first.
#[derive(Debug)]
pub struct Recovered {
    pub wal: Wal,
    pub records: Vec<(String, String)>,
    /// Bytes of a torn or invalid tail that recovery discarded.
    pub discarded: usize,
}

impl Wal {
    /// Opens `dir/wal.log`, creating it if missing, and makes its state
    /// durable before returning. `dir_fsync` false is `--bug no-dir-fsync`.
    pub fn open(dir: &Path, dir_fsync: bool) -> io::Result<Recovered> {
        let log = dir.join(LOG);
        let (records, discarded) = match fs::read(&log) {
            Ok(bytes) => {
                let (records, valid) = replay(&bytes);
                rewrite(dir, &bytes[..valid], dir_fsync)?;
                (records, bytes.len() - valid)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                create(dir, dir_fsync)?;
                (Vec::new(), 0)
            }
            Err(e) => return Err(e),
        };
        let file = OpenOptions::new().append(true).open(&log)?;
        Ok(Recovered {
            wal: Wal { file },
            records,
            discarded,
        })
    }

    /// Appends one put with a single write() (not yet durable).
    pub fn append(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.file.write_all(format!("{key}={value}\n").as_bytes())
    }

    /// Makes every append so far durable (fdatasync: the size change that an
    /// append makes is part of what fdatasync persists).
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// Parses the longest prefix of complete, valid lines: the puts in it and
/// its length in bytes. Whatever follows (a torn last line, zeros from a
/// lost write) was never acknowledged by a correct server.
fn replay(bytes: &[u8]) -> (Vec<(String, String)>, usize) {
    let mut records = Vec::new();
    let mut valid = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let Some(record) = line.strip_suffix(b"\n").and_then(parse_record) else {
            break;
        };
        records.push(record);
        valid += line.len();
    }
    (records, valid)
}

fn parse_record(line: &[u8]) -> Option<(String, String)> {
    let (key, value) = std::str::from_utf8(line).ok()?.split_once('=')?;
    (is_key(key) && is_value(value)).then(|| (key.to_owned(), value.to_owned()))
}

/// Creates an empty log: the file and its directory entry both durable.
fn create(dir: &Path, dir_fsync: bool) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(LOG))?;
    file.sync_all()?;
    sync_dir(dir, dir_fsync)
}

/// Replaces the log with `valid`, durably (see the module docs for why).
fn rewrite(dir: &Path, valid: &[u8], dir_fsync: bool) -> io::Result<()> {
    let tmp: PathBuf = dir.join(TMP);
    let mut file = File::create(&tmp)?;
    file.write_all(valid)?;
    file.sync_all()?;
    fs::rename(&tmp, dir.join(LOG))?;
    sync_dir(dir, dir_fsync)
}

/// fsyncs the directory so entries created or renamed in it survive a crash.
fn sync_dir(dir: &Path, dir_fsync: bool) -> io::Result<()> {
    if dir_fsync {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn replays_complete_lines() {
        let (records, valid) = replay(b"k0=v0\nk1=v=1\nk0=v2\n");
        assert_eq!(records, [kv("k0", "v0"), kv("k1", "v=1"), kv("k0", "v2")]);
        assert_eq!(valid, 19);
    }

    #[test]
    fn stops_at_a_torn_last_line() {
        assert_eq!(replay(b"k0=v0\nk1=v"), (vec![kv("k0", "v0")], 6));
    }

    #[test]
    fn stops_at_zeros_and_garbage() {
        assert_eq!(
            replay(b"k0=v0\n\0\0\0\0\0\0k2=v2\n"),
            (vec![kv("k0", "v0")], 6)
        );
        assert_eq!(replay(b"k0=v0\nk1\nk2=v2\n"), (vec![kv("k0", "v0")], 6));
        assert_eq!(replay(b"=v0\n"), (vec![], 0));
    }

    #[test]
    fn open_creates_then_recovers_the_valid_prefix() {
        let dir = std::env::temp_dir().join(format!("kvserver-wal-test-{}", std::process::id()));
        fs::create_dir(&dir).unwrap();
        let mut wal = Wal::open(&dir, true).unwrap().wal;
        wal.append("k0", "v0").unwrap();
        wal.sync().unwrap();
        wal.file.write_all(b"k1=v").unwrap();
        let recovered = Wal::open(&dir, true).unwrap();
        assert_eq!(
            (recovered.records, recovered.discarded),
            (vec![kv("k0", "v0")], 4)
        );
        assert_eq!(fs::read(dir.join(LOG)).unwrap(), b"k0=v0\n");
        assert!(!dir.join(TMP).exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
