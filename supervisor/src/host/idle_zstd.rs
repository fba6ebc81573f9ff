//! A zstd-compressed file written by a thread of its own that only takes
//! CPU time no other thread wants (`SCHED_IDLE`), for a seed's trace.
//!
//! Compressing one 128 KiB block of trace takes about 200 µs. Done by the
//! supervisor between its looks for the next call (as it was), it held up
//! the call that came meanwhile, about 1,700 times a 60 s etcd seed (346
//! ms in all; README, Performance, step 20). The supervisor now only hands
//! over what it wrote, in
//! chunks; the compressing thread runs on any CPU faultline may use, in
//! the moments that CPU would idle (the programs' CPU while they all wait
//! for the supervisor, a CPU left to a run with one), and a program or the
//! supervisor woken there takes the CPU back at once. Should it fall
//! [`BACKLOG`] chunks behind, the supervisor waits for it, so the trace
//! never holds more than a few MiB of memory.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

/// Bytes the supervisor collects before it hands them over.
const CHUNK_BYTES: usize = 64 * 1024;

/// Chunks handed over and not yet compressed, at most.
const BACKLOG: usize = 64;

/// The compressing zstd level: fast, and about tenfold on a trace.
const LEVEL: i32 = 1;

/// A zstd stream into a file, compressed in the background.
pub struct IdleZstd {
    /// Written, not yet handed over.
    chunk: Vec<u8>,
    /// To the compressing thread; None once finished.
    chunks: Option<SyncSender<Vec<u8>>>,
    /// The compressing thread: the first write error, or none.
    writer: Option<JoinHandle<io::Result<()>>>,
}

impl IdleZstd {
    /// Starts the stream (its header is written at once) and its thread.
    pub fn new(file: File) -> io::Result<IdleZstd> {
        let mut encoder = zstd::Encoder::new(BufWriter::new(file), LEVEL)?;
        let (chunks, incoming) = sync_channel::<Vec<u8>>(BACKLOG);
        let writer = std::thread::Builder::new()
            .name("faultline-trace".into())
            .spawn(move || {
                take_idle_time_only();
                // After an error the rest is still taken (so the supervisor
                // never waits on a full backlog) and dropped.
                let mut result = Ok(());
                for chunk in incoming {
                    if result.is_ok() {
                        result = encoder.write_all(&chunk);
                    }
                }
                result?;
                encoder.finish()?.flush()
            })?;
        Ok(IdleZstd {
            chunk: Vec::with_capacity(CHUNK_BYTES),
            chunks: Some(chunks),
            writer: Some(writer),
        })
    }

    /// Appends `bytes` to the stream.
    pub fn write(&mut self, bytes: &[u8]) {
        self.chunk.extend_from_slice(bytes);
        if self.chunk.len() >= CHUNK_BYTES {
            self.hand_over();
        }
    }

    /// Hands the collected bytes to the compressing thread, waiting while
    /// it is [`BACKLOG`] chunks behind.
    fn hand_over(&mut self) {
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK_BYTES));
        if let Some(chunks) = &self.chunks {
            // Fails only if the thread is gone; finish() then says why.
            let _ = chunks.send(chunk);
        }
    }

    /// Ends the stream: everything written is compressed, the zstd frame
    /// closed and the file flushed. The first write error, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        if !self.chunk.is_empty() {
            self.hand_over();
        }
        self.chunks = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the trace's compressing thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for IdleZstd {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Makes the calling thread run only when a CPU has nothing else to do, on
/// any CPU faultline may use, with every signal blocked (they are for the
/// supervisor's thread). Best effort: a kernel that refuses leaves it an
/// ordinary thread, which only costs time.
fn take_idle_time_only() {
    crate::host::placement::unpin_calling_thread();
    // SAFETY: plain calls on local, zeroed structures.
    unsafe {
        let param: libc::sched_param = std::mem::zeroed();
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("faultline-idle-zstd-{}-{name}", std::process::id()))
    }

    #[test]
    fn many_chunks_read_back_in_order() {
        let path = scratch("order");
        let mut z = IdleZstd::new(File::create(&path).unwrap()).unwrap();
        let lines: Vec<String> = (0..40_000).map(|i| format!("line {i}\n")).collect();
        lines.iter().for_each(|l| z.write(l.as_bytes()));
        z.finish().unwrap();
        let back = zstd::decode_all(File::open(&path).unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(
            lines.concat().len() > 4 * CHUNK_BYTES,
            "spans several chunks"
        );
        assert_eq!(String::from_utf8(back).unwrap(), lines.concat());
    }

    /// The scheduling policy (`/proc/.../stat` field 41) of each thread
    /// of this process named `faultline-trace`.
    fn trace_thread_policies() -> Vec<i32> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| {
                let dir = t.ok()?.path();
                let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
                (comm.trim() == "faultline-trace").then_some(())?;
                let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
                // Fields after the parenthesized name start at field 3.
                let after = &stat[stat.rfind(')')? + 2..];
                after.split(' ').nth(41 - 3)?.parse().ok()
            })
            .collect()
    }

    #[test]
    fn the_thread_takes_idle_time_only() {
        let mut z = IdleZstd::new(File::create("/dev/null").unwrap()).unwrap();
        // The thread sets its policy as it starts.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let policies = loop {
            let p = trace_thread_policies();
            if !p.is_empty() && p.iter().all(|&p| p == libc::SCHED_IDLE)
                || std::time::Instant::now() > deadline
            {
                break p;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        z.finish().unwrap();
        assert!(!policies.is_empty(), "no faultline-trace thread");
        assert!(
            policies.iter().all(|&p| p == libc::SCHED_IDLE),
            "{policies:?}"
        );
    }

    #[test]
    fn a_full_disk_is_reported_at_finish() {
        let mut z = IdleZstd::new(File::create("/dev/full").unwrap()).unwrap();
        (0..20_000).for_each(|i| z.write(format!("line {i}\n").as_bytes()));
        let err = z.finish().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "{err}");
    }
}
