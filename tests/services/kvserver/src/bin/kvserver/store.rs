//! The key-value map and its log, behind one lock. A put holds the lock
//! from its append to its ack decision, so the log's order is the order of
//! the map's updates and nobody acks behind a failed write or fsync.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use crate::bug::Bug;
use crate::wal::Wal;

/// How often `--bug ack-before-fsync` syncs the log: a group commit's
/// interval, long enough that a crash lands in the window an acked put
/// is not yet durable in most seeds (9 of 10 with the disk tests' crash
/// plan; 1 of 10 at 5 ms).
const SYNC_INTERVAL: Duration = Duration::from_millis(50);

/// Pause between fsync retries under `--bug ignore-fsync-error`.
const RETRY_PAUSE: Duration = Duration::from_millis(1);

/// Why a put was not acknowledged. Every variant means the server must stop:
/// the log's tail is in an unknown state that only a restart's recovery fixes.
#[derive(Debug)]
pub enum PutError {
    /// write() failed (ENOSPC, EIO); part of the line may be in the file.
    Write(io::Error),
    /// fdatasync failed: the kernel dropped the dirty data.
    Fsync(io::Error),
    /// An earlier put failed; the server is exiting.
    Stopped,
}

impl PutError {
    /// The protocol's reply for this error.
    pub fn reply(&self) -> &'static str {
        match self {
            PutError::Write(_) => "ERR write",
            PutError::Fsync(_) => "ERR fsync",
            PutError::Stopped => "ERR stopped",
        }
    }
}

impl fmt::Display for PutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PutError::Write(e) => write!(f, "write failed: {e}"),
            PutError::Fsync(e) => write!(f, "fdatasync failed: {e}"),
            PutError::Stopped => f.write_str("an earlier put failed"),
        }
    }
}

/// The server's state, shared by all connections.
#[derive(Debug)]
pub struct Store {
    inner: Mutex<Inner>,
    bug: Option<Bug>,
}

#[derive(Debug)]
struct Inner {
    map: HashMap<String, String>,
    wal: Wal,
    /// Appended but not yet synced (only under `--bug ack-before-fsync`).
    dirty: bool,
    /// A write or fsync failed; no put may be acknowledged any more.
    failed: bool,
}

impl Store {
    /// A store holding the replayed `records`; under `--bug ack-before-fsync`
    /// this also starts the thread that syncs the log every 5 ms.
    pub fn start(wal: Wal, records: Vec<(String, String)>, bug: Option<Bug>) -> Arc<Store> {
        let store = Arc::new(Store {
            inner: Mutex::new(Inner {
                map: records.into_iter().collect(),
                wal,
                dirty: false,
                failed: false,
            }),
            bug,
        });
        if bug == Some(Bug::AckBeforeFsync) {
            let store = Arc::clone(&store);
            thread::spawn(move || store.sync_every_interval());
        }
        store
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// The value of `key`. Only durable puts are visible (except under
    /// `--bug ack-before-fsync`, which shows what it acked).
    pub fn get(&self, key: &str) -> Option<String> {
        self.lock().map.get(key).cloned()
    }

    /// Logs and applies a put; `Ok` means it may be acknowledged.
    pub fn put(&self, key: &str, value: &str) -> Result<(), PutError> {
        let mut inner = self.lock();
        if inner.failed {
            return Err(PutError::Stopped);
        }
        let logged = inner.wal.append(key, value).map_err(PutError::Write);
        let durable = logged.and_then(|()| self.sync_put(&mut inner));
        if durable.is_err() {
            inner.failed = true;
        }
        durable?;
        inner.map.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    /// The durability step of a put, which is where the bugs live.
    fn sync_put(&self, inner: &mut Inner) -> Result<(), PutError> {
        match self.bug {
            Some(Bug::AckBeforeFsync) => {
                inner.dirty = true;
                Ok(())
            }
            Some(Bug::IgnoreFsyncError) => {
                while let Err(e) = inner.wal.sync() {
                    eprintln!("kvserver: fdatasync failed ({e}), retrying");
                    thread::sleep(RETRY_PAUSE);
                }
                Ok(())
            }
            Some(Bug::NoDirFsync) | None => inner.wal.sync().map_err(PutError::Fsync),
        }
    }

    /// The `--bug ack-before-fsync` background sync. An fsync error here
    /// crash-stops the server like a put's would.
    fn sync_every_interval(&self) {
        loop {
            thread::sleep(SYNC_INTERVAL);
            let mut inner = self.lock();
            if inner.dirty {
                if let Err(e) = inner.wal.sync() {
                    eprintln!("kvserver: background fdatasync failed: {e}");
                    std::process::exit(1);
                }
                inner.dirty = false;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .expect("a connection thread panicked holding the store lock")
    }
}
