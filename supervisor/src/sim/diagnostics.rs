//! What faultline tells the user about a run besides its verdict: calls it
//! refused, connects it blocked, watchdog preemptions, programs killed by a
//! signal. Each distinct line goes to the terminal once; every one, with
//! when it first happened and how often, goes to the seed's faultline.log
//! and is counted by kind in report.json, so a seed run by `-j` workers or
//! in CI keeps them.

use crate::hashing::HashMap;
use std::collections::BTreeMap;

use serde::Serialize;

/// What a diagnostic is about (report.json's `diagnostics` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagKind {
    /// A call the sandbox does not model failed with an errno.
    RefusedCall,
    /// A connect or datagram to an address outside the simulated network.
    BlockedConnect,
    /// The watchdog stopped a thread that ran without a trapped call.
    Preemption,
    /// A process died on a signal it did not get from the fault plan.
    Killed,
    /// faultline's vDSO could not be installed: every clock read traps.
    Vdso,
    /// faultline itself failed at something (and answered the program safely).
    InternalError,
    /// The program read host state faultline does not simulate.
    HostState,
}

impl DiagKind {
    /// The kind's name, as report.json and faultline.log spell it.
    pub fn name(self) -> &'static str {
        match self {
            DiagKind::RefusedCall => "refused_call",
            DiagKind::BlockedConnect => "blocked_connect",
            DiagKind::Preemption => "preemption",
            DiagKind::Killed => "killed",
            DiagKind::Vdso => "vdso",
            DiagKind::InternalError => "internal_error",
            DiagKind::HostState => "host_state",
        }
    }
}

/// One distinct diagnostic of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnostic {
    /// Virtual ns of its first occurrence.
    pub t: u64,
    /// Trace events recorded before it first happened.
    pub event: u64,
    /// What it is about.
    pub kind: DiagKind,
    /// The line faultline printed.
    pub message: String,
    /// How often it happened.
    pub count: u64,
}

/// The diagnostics of a run so far.
#[derive(Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
    index: HashMap<(DiagKind, String), usize>,
}

impl Diagnostics {
    /// Notes one occurrence at virtual time `t` after `event` trace events;
    /// true if the message is new (the caller prints it).
    pub fn note(&mut self, t: u64, event: u64, kind: DiagKind, message: String) -> bool {
        if let Some(&i) = self.index.get(&(kind, message.clone())) {
            self.list[i].count += 1;
            return false;
        }
        self.index.insert((kind, message.clone()), self.list.len());
        self.list.push(Diagnostic {
            t,
            event,
            kind,
            message,
            count: 1,
        });
        true
    }

    /// Every distinct diagnostic, in the order they first happened.
    pub fn into_list(self) -> Vec<Diagnostic> {
        self.list
    }
}

/// Occurrences per kind (report.json's `diagnostics`).
pub fn counts(list: &[Diagnostic]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for d in list {
        *counts.entry(d.kind.name().to_string()).or_insert(0) += d.count;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_occurrence_and_keeps_the_first() {
        let mut d = Diagnostics::default();
        assert!(d.note(5, 10, DiagKind::Preemption, "at rip 0x1".into()));
        assert!(!d.note(9, 20, DiagKind::Preemption, "at rip 0x1".into()));
        assert!(d.note(9, 21, DiagKind::Preemption, "at rip 0x2".into()));
        assert!(d.note(9, 22, DiagKind::RefusedCall, "io_uring".into()));
        let list = d.into_list();
        assert_eq!((list[0].t, list[0].event, list[0].count), (5, 10, 2));
        assert_eq!(
            counts(&list),
            BTreeMap::from([
                ("preemption".to_string(), 3),
                ("refused_call".to_string(), 1)
            ])
        );
    }
}
