//! Whether a seed replays: `run` runs a failing seed (with
//! `--check-determinism`, every seed) a second time and compares the two
//! traces. The result goes into report.json (`replays`) and the verdict
//! block: "identical", or the first divergent event of each run with the
//! likely cause, so a failure that does not replay is never taken for one
//! that does.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::engine::Outcome;
use crate::report::divergence::Divergence;

/// The result of running a seed twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replays {
    /// Both runs gave the same trace (and hash).
    Identical,
    /// The runs parted ways.
    Diverged(Box<Diverged>),
}

/// Where two runs of a seed parted ways, and why if faultline can tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diverged {
    /// The first differing event's number (from 1).
    pub event: usize,
    /// That event in the first run (None: the first run had ended).
    pub first: Option<TraceEvent>,
    /// That event in the second run (None: the second run had ended).
    pub second: Option<TraceEvent>,
    /// The likely cause.
    pub cause: Cause,
}

/// One trace event, with the node whose thread made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// The node (host) of the thread ("" when faultline made the event
    /// itself, e.g. a timer's expiry).
    pub node: String,
    /// The virtual thread id (0: faultline).
    pub thread: u32,
    /// Virtual ns.
    pub t_ns: u64,
    /// The call or event.
    pub call: String,
    /// The arguments the trace keeps.
    pub args: Vec<i64>,
    /// The result, or how the call was handled.
    pub result: String,
}

/// Why two runs of a seed may differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A run read host state faultline does not simulate (report.json's
    /// `host_state` lists what).
    HostState,
    /// The watchdog preempted a thread that ran without a syscall: where
    /// it stopped depends on the host's speed.
    WatchdogPreemption,
    /// Nothing faultline saw: a file the program changes between runs, a
    /// call faultline does not trap that answers differently, or a bug of
    /// faultline's.
    Unknown,
}

impl Cause {
    /// The cause two runs point at: a host-state read in either comes
    /// first (it is named in report.json), then a watchdog preemption.
    fn of(read_host_state: bool, preempted: bool) -> Cause {
        match (read_host_state, preempted) {
            (true, _) => Cause::HostState,
            (false, true) => Cause::WatchdogPreemption,
            (false, false) => Cause::Unknown,
        }
    }
}

/// One line of a trace file, as the trace writes it.
#[derive(Deserialize)]
struct Line {
    t: u64,
    tid: u32,
    call: String,
    args: Vec<i64>,
    ret: String,
}

impl TraceEvent {
    /// Reads a trace line; `node_of` names a thread's node.
    fn parse(line: &str, node_of: impl Fn(u32) -> String) -> Option<TraceEvent> {
        let l: Line = serde_json::from_str(line).ok()?;
        Some(TraceEvent {
            node: node_of(l.tid),
            thread: l.tid,
            t_ns: l.t,
            call: l.call,
            args: l.args,
            result: l.ret,
        })
    }

    /// "node kv, thread 3, t=0.123456789s: read(5, 4096) -> 4096".
    fn words(event: Option<&TraceEvent>) -> String {
        let Some(e) = event else {
            return "(run ended)".into();
        };
        let args: Vec<String> = e.args.iter().map(i64::to_string).collect();
        let node = match e.node.as_str() {
            "" => "faultline".to_string(),
            node => format!("node {node}"),
        };
        format!(
            "{node}, thread {}, t={:.9}s: {}({}) -> {}",
            e.thread,
            e.t_ns as f64 / 1e9,
            e.call,
            args.join(", "),
            e.result
        )
    }
}

/// The node of thread `tid` of a run ("" for faultline's own events).
fn node_of(run: &Outcome, tid: u32) -> String {
    run.thread_nodes.get(&tid).cloned().unwrap_or_default()
}

impl Diverged {
    /// The divergence `d` of runs `first` and `second`, with each event's
    /// node and the cause the runs' own reports point at.
    pub fn new(d: &Divergence, first: &Outcome, second: &Outcome) -> Diverged {
        let cause = Cause::of(
            !first.host_state.is_empty() || !second.host_state.is_empty(),
            first.preemptions + second.preemptions > 0,
        );
        Diverged {
            event: d.event,
            first: TraceEvent::parse(&d.first, |tid| node_of(first, tid)),
            second: TraceEvent::parse(&d.second, |tid| node_of(second, tid)),
            cause,
        }
    }
}

impl Replays {
    /// The verdict block's lines: "  replays:   identical", or the first
    /// divergent event of each run and the cause.
    pub fn text(&self, host_state: &[crate::sys::host_state::HostStateRead]) -> String {
        let d = match self {
            Replays::Identical => {
                return "  replays:   identical (a second run gave the same trace)\n".into()
            }
            Replays::Diverged(d) => d,
        };
        let mut text = String::new();
        let _ = writeln!(
            text,
            "  replays:   DIFFER: a second run parted ways at event {}",
            d.event
        );
        let _ = writeln!(text, "    run 1:   {}", TraceEvent::words(d.first.as_ref()));
        let _ = writeln!(
            text,
            "    run 2:   {}",
            TraceEvent::words(d.second.as_ref())
        );
        let cause = match d.cause {
            Cause::HostState => format!(
                "host state ({})",
                crate::sys::host_state::host_state_words(host_state)
            ),
            Cause::WatchdogPreemption => {
                "watchdog preemption (a thread ran without syscalls; where it stopped depends on the host)"
                    .into()
            }
            Cause::Unknown => {
                "unknown (nothing faultline saw: a file the program changes between runs, or a call faultline does not trap)"
                    .into()
            }
        };
        let _ = writeln!(text, "    cause:   {cause}");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_divergent_event_reads_with_its_node_call_args_and_result() {
        let line = r#"{"n":7,"t":1500000000,"tid":3,"call":"read","args":[5,4096],"ret":"=12"}"#;
        let e = TraceEvent::parse(line, |tid| format!("n{tid}")).expect("parses");
        assert_eq!(
            TraceEvent::words(Some(&e)),
            "node n3, thread 3, t=1.500000000s: read(5, 4096) -> =12"
        );
        assert_eq!(TraceEvent::words(None), "(run ended)");
    }

    #[test]
    fn host_state_is_named_before_a_preemption_and_unknown_is_last() {
        assert_eq!(Cause::of(true, true), Cause::HostState);
        assert_eq!(Cause::of(false, true), Cause::WatchdogPreemption);
        assert_eq!(Cause::of(false, false), Cause::Unknown);
    }

    #[test]
    fn report_json_says_identical_or_gives_the_divergence() {
        let json = serde_json::to_string(&Replays::Identical).expect("serializes");
        assert_eq!(json, r#""identical""#);
        let d = Replays::Diverged(Box::new(Diverged {
            event: 2,
            first: None,
            second: None,
            cause: Cause::Unknown,
        }));
        let json = serde_json::to_string(&d).expect("serializes");
        assert!(json.starts_with(r#"{"diverged":{"event":2"#), "{json}");
        assert!(json.contains(r#""cause":"unknown""#), "{json}");
    }
}
