//! The event trace: one record per scheduling-relevant event, folded into a
//! running hash. Two runs of one seed must produce the same hash; the records
//! themselves (JSON lines) explain where two runs part ways.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Write};

use serde::Serialize;

use crate::host::idle_zstd::IdleZstd;

/// One event of the trace. `tid` is the virtual thread id (creation order),
/// never the host's, so traces compare across runs and machines.
#[derive(Debug, Serialize)]
pub struct Event {
    /// Event number, from 1.
    pub n: u64,
    /// Virtual time in nanoseconds since the run started.
    pub t: u64,
    /// Virtual thread id.
    pub tid: u32,
    /// Syscall or event name.
    pub call: &'static str,
    /// The arguments that matter for the outcome.
    pub args: Vec<i64>,
    /// The outcome: a return value, or how the call was handled.
    pub ret: String,
    /// The paths a file call on a node's disk named, as the program sees
    /// them (absent for every other event, so their lines are unchanged).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a, stable across platforms and releases (unlike std's hasher).
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// Hash of a byte string from the FNV offset basis.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    fnv1a(FNV_OFFSET, bytes)
}

/// Where trace lines go: a plain JSON-lines file (`exec --trace`), or a
/// zstd-compressed one (a seed's trace.jsonl.zst: long runs write hundreds
/// of megabytes of trace, which compress about tenfold), compressed on a
/// thread that takes only idle CPU time.
enum Sink {
    Plain(BufWriter<File>),
    Zstd(IdleZstd),
}

impl Sink {
    /// A full disk must not change the run; the error surfaces at finish().
    fn write(&mut self, line: &[u8]) {
        match self {
            Sink::Plain(w) => {
                let _ = w.write_all(line);
            }
            Sink::Zstd(z) => z.write(line),
        }
    }
}

/// Events held unwritten at most: a supervisor that never waits for a
/// program (every thread parked, timers firing) still writes them.
const MAX_PENDING: usize = 4096;

/// The running trace of one run.
pub struct TraceLog {
    hash: u64,
    count: u64,
    file: Option<Sink>,
    kept: Option<Vec<String>>,
    /// Paths for the next event (see [`TraceLog::note_paths`]).
    paths: Vec<String>,
    /// Recorded, not yet written or hashed (see [`TraceLog::write_pending`]).
    pending: VecDeque<Event>,
    /// The line being written, kept for its capacity.
    line: Vec<u8>,
}

/// Reads a trace back, line by line, whether plain or zstd-compressed (the
/// file's first bytes tell).
pub fn read_lines(path: &std::path::Path) -> io::Result<Vec<String>> {
    use std::io::{BufRead, BufReader, Read};
    let mut file = File::open(path)?;
    let mut magic = [0u8; 4];
    let n = file.read(&mut magic)?;
    let head = io::Cursor::new(magic[..n].to_vec());
    let raw = head.chain(file);
    let reader: Box<dyn BufRead> = if magic[..n] == [0x28, 0xb5, 0x2f, 0xfd] {
        Box::new(BufReader::new(zstd::Decoder::new(raw)?))
    } else {
        Box::new(BufReader::new(raw))
    };
    reader.lines().collect()
}

impl TraceLog {
    /// A trace that optionally writes JSON lines to `file` and optionally keeps
    /// every line in memory (for `--check-determinism`).
    pub fn new(file: Option<File>, keep_lines: bool) -> TraceLog {
        TraceLog {
            hash: FNV_OFFSET,
            count: 0,
            file: file.map(|f| Sink::Plain(BufWriter::new(f))),
            kept: keep_lines.then(Vec::new),
            paths: Vec::new(),
            pending: VecDeque::new(),
            line: Vec::new(),
        }
    }

    /// Names the paths of the next event: a handler knows them, the
    /// dispatcher that records the call does not.
    pub fn note_paths(&mut self, paths: Vec<String>) {
        self.paths = paths;
    }

    /// A trace written zstd-compressed to `file` (read it back with
    /// [`read_lines`], or `zstdcat`).
    pub fn compressed(file: File) -> io::Result<TraceLog> {
        Ok(TraceLog {
            file: Some(Sink::Zstd(IdleZstd::new(file)?)),
            ..TraceLog::new(None, false)
        })
    }

    /// Appends an event (the event number is assigned here), with the
    /// paths noted for it, if any. It is written and hashed later, by
    /// [`TraceLog::write_pending`]: the engine calls that while a program
    /// runs, so the writing is not between a call and its answer.
    pub fn record(
        &mut self,
        t: u64,
        tid: u32,
        call: &'static str,
        args: &[i64],
        ret: impl Into<String>,
    ) {
        self.count += 1;
        self.pending.push_back(Event {
            n: self.count,
            t,
            tid,
            call,
            args: args.to_vec(),
            ret: ret.into(),
            paths: std::mem::take(&mut self.paths),
        });
        if self.pending.len() >= MAX_PENDING {
            self.write_pending();
        }
    }

    /// Writes and hashes the events recorded since the last call, in order.
    pub fn write_pending(&mut self) {
        while self.write_one() {}
    }

    /// Writes and hashes the oldest event not yet written, if any; true if
    /// one was (the engine writes them one at a time while it waits for a
    /// program, looking for its next call between two).
    pub fn write_one(&mut self) -> bool {
        let Some(ev) = self.pending.pop_front() else {
            return false;
        };
        self.line.clear();
        serde_json::to_writer(&mut self.line, &ev).expect("events always serialize");
        self.hash = fnv1a(self.hash, &self.line);
        self.hash = fnv1a(self.hash, b"\n");
        self.line.push(b'\n');
        if let Some(f) = self.file.as_mut() {
            f.write(&self.line);
        }
        if let Some(k) = self.kept.as_mut() {
            let line = &self.line[..self.line.len() - 1];
            k.push(String::from_utf8(line.to_vec()).expect("JSON is UTF-8"));
        }
        true
    }

    /// The running hash over all events so far.
    pub fn hash(&mut self) -> u64 {
        self.write_pending();
        self.hash
    }

    /// How many events were recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The kept lines (empty unless constructed with `keep_lines`).
    pub fn lines(&mut self) -> &[String] {
        self.write_pending();
        self.kept.as_deref().unwrap_or(&[])
    }

    /// Writes the pending events and flushes the trace file (and ends its
    /// zstd frame).
    pub fn finish(&mut self) -> io::Result<()> {
        self.write_pending();
        match self.file.as_mut() {
            Some(Sink::Plain(f)) => f.flush(),
            Some(Sink::Zstd(z)) => z.finish(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the same two events in `t`.
    fn two_events(t: &mut TraceLog) {
        t.record(1, 1, "futex", &[0, 1], "0");
        t.record(2, 2, "read", &[3], "pass");
    }

    #[test]
    fn same_events_same_hash_and_order_matters() {
        let mut a = TraceLog::new(None, true);
        let mut b = TraceLog::new(None, false);
        two_events(&mut a);
        two_events(&mut b);
        assert_eq!(a.hash(), b.hash());
        assert_eq!(a.lines().len(), 2);
        let mut c = TraceLog::new(None, false);
        c.record(2, 2, "read", &[3], "pass");
        c.record(1, 1, "futex", &[0, 1], "0");
        assert_ne!(a.hash(), c.hash());
    }

    #[test]
    fn events_written_one_at_a_time_hash_as_written_together() {
        let mut a = TraceLog::new(None, true);
        let mut b = TraceLog::new(None, true);
        two_events(&mut a);
        two_events(&mut b);
        assert!(a.write_one());
        a.record(3, 1, "nanosleep", &[20000], "park");
        assert!(a.write_one() && a.write_one());
        assert!(!a.write_one(), "all three written");
        b.record(3, 1, "nanosleep", &[20000], "park");
        assert_eq!(a.hash(), b.hash());
        assert_eq!(a.lines(), b.lines());
        assert_eq!(
            a.lines()[2],
            r#"{"n":3,"t":3,"tid":1,"call":"nanosleep","args":[20000],"ret":"park"}"#
        );
    }

    #[test]
    fn noted_paths_go_to_the_next_event_only() {
        let mut t = TraceLog::new(None, true);
        t.note_paths(vec!["/data/wal".into()]);
        t.record(1, 1, "mkdir", &[], "pass");
        t.record(2, 1, "write", &[1], "pass");
        assert_eq!(
            t.lines(),
            [
                r#"{"n":1,"t":1,"tid":1,"call":"mkdir","args":[],"ret":"pass","paths":["/data/wal"]}"#,
                r#"{"n":2,"t":2,"tid":1,"call":"write","args":[1],"ret":"pass"}"#
            ]
        );
    }

    #[test]
    fn a_compressed_trace_reads_back_line_for_line() {
        let path = std::env::temp_dir().join(format!("faultline-trace-{}.zst", std::process::id()));
        let mut t = TraceLog::compressed(File::create(&path).unwrap()).unwrap();
        t.record(1, 1, "futex", &[0, 1], "0");
        t.record(2, 2, "read", &[3], "pass");
        t.finish().unwrap();
        let lines = read_lines(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].contains("\"call\":\"read\""), "{lines:?}");
    }
}
