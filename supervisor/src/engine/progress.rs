//! The progress line of a long run (`--progress`): every so often of wall
//! time, how far virtual time has got, how many events that took and how
//! fast it goes, so that a user waiting on an hour of virtual time sees it
//! move. Only the wall clock decides when a line is due, and nothing of
//! the run reads it: the trace is the same with or without the lines.

use std::time::{Duration, Instant};

/// Looks at the wall clock once in this many turns of the run loop: a
/// turn is a few microseconds, so a line is at most a few ms late.
const TURNS_PER_LOOK: u32 = 1024;

/// When the next line is due, and the run's start it measures from.
#[derive(Debug)]
pub(crate) struct Progress {
    every: Duration,
    started: Instant,
    next: Instant,
    turns: u32,
}

impl Progress {
    /// A line every `every` of wall time from now.
    pub(crate) fn new(every: Duration) -> Progress {
        let now = Instant::now();
        Progress {
            every,
            started: now,
            next: now + every,
            turns: 0,
        }
    }

    /// The line to print now, if one is due: virtual time `vtime_ns` (of
    /// `until_ns`, when the run has an end), after `events` events.
    pub(crate) fn line(
        &mut self,
        vtime_ns: u64,
        until_ns: Option<u64>,
        events: u64,
    ) -> Option<String> {
        self.turns = self.turns.wrapping_add(1);
        if !self.turns.is_multiple_of(TURNS_PER_LOOK) {
            return None;
        }
        let now = Instant::now();
        if now < self.next {
            return None;
        }
        self.next = now + self.every;
        Some(describe(vtime_ns, until_ns, events, now - self.started))
    }
}

/// "faultline: progress: 12.0 of 60.0 virtual s (20%), 254000 events in
/// 2.0 s of wall time (6.00 virtual s per wall s)".
fn describe(vtime_ns: u64, until_ns: Option<u64>, events: u64, wall: Duration) -> String {
    let v = vtime_ns as f64 / 1e9;
    let (of, share) = until_ns.map_or((String::new(), String::new()), |u| {
        let u = u as f64 / 1e9;
        let pct = if u > 0.0 { 100.0 * v / u } else { 0.0 };
        (format!(" of {u:.1}"), format!(" ({pct:.0}%)"))
    });
    let w = wall.as_secs_f64();
    let rate = if w > 0.0 { v / w } else { 0.0 };
    format!(
        "faultline: progress: {v:.1}{of} virtual s{share}, {events} events in {w:.1} s of wall time ({rate:.2} virtual s per wall s)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_how_far_and_how_fast() {
        assert_eq!(
            describe(12_000_000_000, Some(60_000_000_000), 254_000, Duration::from_secs(2)),
            "faultline: progress: 12.0 of 60.0 virtual s (20%), 254000 events in 2.0 s of wall time (6.00 virtual s per wall s)"
        );
        assert_eq!(
            describe(1_500_000_000, None, 10, Duration::from_secs(3)),
            "faultline: progress: 1.5 virtual s, 10 events in 3.0 s of wall time (0.50 virtual s per wall s)"
        );
    }

    #[test]
    fn a_line_is_due_only_after_its_interval() {
        let mut p = Progress::new(Duration::from_secs(3600));
        assert!((0..5 * TURNS_PER_LOOK).all(|_| p.line(1, None, 1).is_none()));
        let mut p = Progress::new(Duration::ZERO);
        let lines = (0..3 * TURNS_PER_LOOK)
            .filter_map(|_| p.line(1, None, 1))
            .count();
        assert_eq!(lines, 3);
    }
}
