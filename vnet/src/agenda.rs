//! The timeline of future network work (deliveries, timers), ordered by
//! virtual time and then by scheduling order, so ties resolve the same way
//! on every run.

use std::collections::BTreeMap;

/// Handle of one scheduled entry, used to cancel it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Ticket {
    at: u64,
    seq: u64,
}

/// Entries of type `E` waiting for their virtual time.
pub(crate) struct Agenda<E> {
    entries: BTreeMap<Ticket, E>,
    next_seq: u64,
}

impl<E> Agenda<E> {
    /// An empty agenda.
    pub(crate) fn new() -> Agenda<E> {
        Agenda {
            entries: BTreeMap::new(),
            next_seq: 0,
        }
    }

    /// Adds `entry`, due at `at`.
    pub(crate) fn schedule(&mut self, at: u64, entry: E) -> Ticket {
        let ticket = Ticket {
            at,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        self.entries.insert(ticket, entry);
        ticket
    }

    /// Removes a scheduled entry (no effect if it already ran).
    pub(crate) fn cancel(&mut self, ticket: Ticket) {
        self.entries.remove(&ticket);
    }

    /// When the earliest entry is due.
    pub(crate) fn next_time(&self) -> Option<u64> {
        self.entries.keys().next().map(|t| t.at)
    }

    /// Takes the earliest entry if it is due at or before `now`.
    pub(crate) fn pop_due(&mut self, now: u64) -> Option<(u64, E)> {
        let first = self.entries.first_entry()?;
        (first.key().at <= now).then(|| {
            let (ticket, entry) = first.remove_entry();
            (ticket.at, entry)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_schedule_order() {
        let mut a = Agenda::new();
        a.schedule(5, "late");
        a.schedule(3, "first");
        let gone = a.schedule(3, "cancelled");
        a.schedule(3, "second");
        a.cancel(gone);
        assert_eq!(a.next_time(), Some(3));
        assert_eq!(a.pop_due(2).map(|e| e.1), None);
        let order: Vec<_> = std::iter::from_fn(|| a.pop_due(10).map(|e| e.1)).collect();
        assert_eq!(order, ["first", "second", "late"]);
        assert_eq!(a.next_time(), None);
    }
}
