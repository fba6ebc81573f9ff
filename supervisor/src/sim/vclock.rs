//! Virtual time. One monotonic counter of nanoseconds since the run started;
//! every clock a program can read is derived from it, so time only moves when
//! the scheduler moves it.

/// Nanoseconds per second.
pub const NS: u64 = 1_000_000_000;

/// Monotonic clocks start at this "uptime", like a machine booted a while ago,
/// so programs never see a zero monotonic time.
pub const MONOTONIC_BASE_NS: u64 = 100 * NS;

/// TSC ticks per virtual nanosecond for emulated `rdtsc` (a 3 GHz machine).
const TSC_PER_NS: u64 = 3;

/// The run's virtual clock.
#[derive(Debug, Clone)]
pub struct VClock {
    elapsed: u64,
    epoch_ns: i128,
    /// Hosts whose clocks differ from the run's (clock faults), by index.
    hosts: Vec<HostClock>,
}

/// How one host's clocks differ from the run's: its wall clock is offset
/// (`clock_offset`, `clock_jump`), and all its clocks may run at a rate
/// off by `ppm` since `drift_since` (`clock_drift`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct HostClock {
    /// Added to its wall clock only.
    real_offset: i128,
    /// Rate error in parts per million.
    ppm: i64,
    /// When the current rate began (run ns).
    drift_since: u64,
    /// Drift accumulated before `drift_since` (ns, all its clocks).
    drift_before: i128,
}

impl HostClock {
    /// How far its clocks have drifted from the run's at `elapsed`.
    fn drift(&self, elapsed: u64) -> i128 {
        let span = elapsed.saturating_sub(self.drift_since) as i128;
        self.drift_before + span * self.ppm as i128 / 1_000_000
    }
}

/// A `struct timespec` as the kernel lays it out.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Timespec {
    /// Seconds.
    pub sec: i64,
    /// Nanoseconds, 0..1e9.
    pub nsec: i64,
}

// SAFETY: two i64 fields, repr(C): no padding, every bit pattern valid.
unsafe impl crate::sim::memory::Pod for Timespec {}

impl Timespec {
    /// Converts to nanoseconds; `None` for a negative or malformed value.
    pub fn to_ns(self) -> Option<u64> {
        if self.sec < 0 || !(0..1_000_000_000).contains(&self.nsec) {
            return None;
        }
        Some(
            (self.sec as u64)
                .saturating_mul(NS)
                .saturating_add(self.nsec as u64),
        )
    }

    /// Builds a timespec from signed nanoseconds.
    pub fn from_ns(ns: i128) -> Timespec {
        Timespec {
            sec: ns.div_euclid(NS as i128) as i64,
            nsec: ns.rem_euclid(NS as i128) as i64,
        }
    }
}

impl VClock {
    /// A clock at elapsed 0 whose REALTIME reads `epoch_secs`.
    pub fn new(epoch_secs: i64) -> VClock {
        VClock {
            elapsed: 0,
            epoch_ns: epoch_secs as i128 * NS as i128,
            hosts: Vec::new(),
        }
    }

    /// Virtual nanoseconds since the run started (the scheduler's time base).
    pub fn now(&self) -> u64 {
        self.elapsed
    }

    /// Moves time forward to `t` (never backwards).
    pub fn advance_to(&mut self, t: u64) {
        self.elapsed = self.elapsed.max(t);
    }

    /// Moves time forward by `d`.
    pub fn advance_by(&mut self, d: u64) {
        self.elapsed = self.elapsed.saturating_add(d);
    }

    /// What `clock_gettime(clock_id)` reads at run time `elapsed`. Every id
    /// is answered: the CPU time clocks read elapsed virtual time, since
    /// computation is free.
    fn read_at(&self, clock_id: i32, elapsed: u64) -> i128 {
        if is_realtime(clock_id) {
            let tai = if clock_id == libc::CLOCK_TAI {
                37 * NS as i128
            } else {
                0
            };
            return self.epoch_ns + elapsed as i128 + tai;
        }
        (MONOTONIC_BASE_NS + elapsed) as i128
    }

    fn host(&self, host: usize) -> HostClock {
        self.hosts.get(host).copied().unwrap_or_default()
    }

    fn host_mut(&mut self, host: usize) -> &mut HostClock {
        if self.hosts.len() <= host {
            self.hosts.resize(host + 1, HostClock::default());
        }
        &mut self.hosts[host]
    }

    /// What `clock_gettime(clock_id)` reads now on host `host` (its index):
    /// the run's clock, moved by the host's clock faults.
    pub fn read_on(&self, host: usize, clock_id: i32) -> i128 {
        self.read_on_ahead(host, clock_id, 0)
    }

    /// What `clock_gettime(clock_id)` will read on host `host` once time
    /// has moved `ahead` ns on (a thread let run before its step's cost is
    /// charged sees the time it runs at).
    pub fn read_on_ahead(&self, host: usize, clock_id: i32, ahead: u64) -> i128 {
        let h = self.host(host);
        let wall = if is_realtime(clock_id) {
            h.real_offset
        } else {
            0
        };
        let at = self.elapsed.saturating_add(ahead);
        self.read_at(clock_id, at) + h.drift(at) + wall
    }

    /// Converts an absolute deadline on host `host`'s `clock_id` into
    /// scheduler time (at the host's current rate).
    pub fn deadline_on(&self, host: usize, clock_id: i32, abs_ns: i128) -> u64 {
        let delta = (abs_ns - self.read_on(host, clock_id)).max(0);
        self.elapsed.saturating_add(self.span_on(host, delta))
    }

    /// Scheduler ns that pass while host `host`'s clocks move `local_ns`.
    pub fn span_on(&self, host: usize, local_ns: i128) -> u64 {
        let ppm = self.host(host).ppm as i128;
        let span = local_ns * 1_000_000 / (1_000_000 + ppm);
        span.clamp(0, u64::MAX as i128) as u64
    }

    /// Steps host `host`'s wall clock by `by` ns (monotonic clocks stay).
    pub fn jump(&mut self, host: usize, by: i64) {
        self.host_mut(host).real_offset += by as i128;
    }

    /// From now on host `host`'s clocks run off by `ppm` (0: true rate).
    pub fn set_drift(&mut self, host: usize, ppm: i64) {
        let now = self.elapsed;
        let h = self.host_mut(host);
        h.drift_before = h.drift(now);
        h.drift_since = now;
        h.ppm = ppm;
    }

    /// The emulated time-stamp counter.
    pub fn tsc(&self) -> u64 {
        (MONOTONIC_BASE_NS + self.elapsed).wrapping_mul(TSC_PER_NS)
    }
}

/// True for the clocks that follow the wall-clock epoch.
pub fn is_realtime(clock_id: i32) -> bool {
    matches!(
        clock_id,
        libc::CLOCK_REALTIME
            | libc::CLOCK_REALTIME_COARSE
            | libc::CLOCK_REALTIME_ALARM
            | libc::CLOCK_TAI
    )
}

/// True for the CPU-time clocks: `CLOCK_PROCESS_CPUTIME_ID`,
/// `CLOCK_THREAD_CPUTIME_ID` and the negative ids of
/// `clock_getcpuclockid`/`pthread_getcpuclockid`. They read the virtual CPU
/// time of a thread or process, not the time of day.
pub fn is_cpu_clock(clock_id: i32) -> bool {
    clock_id < 0
        || clock_id == libc::CLOCK_PROCESS_CPUTIME_ID
        || clock_id == libc::CLOCK_THREAD_CPUTIME_ID
}

/// An `--epoch` that is not `YYYY-MM-DDTHH:MM:SSZ`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bad --epoch {text:?}: expected YYYY-MM-DDTHH:MM:SSZ")]
pub struct EpochError {
    /// The epoch as given.
    pub text: String,
}

/// Parses an RFC 3339 UTC timestamp such as `2025-01-01T00:00:00Z` into
/// seconds since the Unix epoch.
pub fn parse_epoch(s: &str) -> Result<i64, EpochError> {
    let bad = || EpochError { text: s.into() };
    let s = s.strip_suffix('Z').ok_or_else(bad)?;
    let (date, time) = s.split_once('T').ok_or_else(bad)?;
    let d: Vec<i64> = date
        .split('-')
        .map(|p| p.parse())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let t: Vec<i64> = time
        .split(':')
        .map(|p| p.parse())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    if d.len() != 3 || t.len() != 3 || !(1..=12).contains(&d[1]) || !(1..=31).contains(&d[2]) {
        return Err(bad());
    }
    Ok(days_from_civil(d[0], d[1], d[2]) * 86_400 + t[0] * 3600 + t[1] * 60 + t[2])
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2025-01-01T00:00:00Z, the CLI's default epoch.
    const DEFAULT_EPOCH_SECS: i64 = 1_735_689_600;

    #[test]
    fn default_epoch_parses() {
        assert_eq!(
            parse_epoch("2025-01-01T00:00:00Z").unwrap(),
            DEFAULT_EPOCH_SECS
        );
        assert_eq!(parse_epoch("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(
            parse_epoch("2025-01-01").unwrap_err().to_string(),
            "bad --epoch \"2025-01-01\": expected YYYY-MM-DDTHH:MM:SSZ"
        );
    }

    #[test]
    fn realtime_follows_epoch_and_monotonic_does_not() {
        let mut c = VClock::new(DEFAULT_EPOCH_SECS);
        c.advance_by(5 * NS);
        assert_eq!(
            c.read_on(0, libc::CLOCK_REALTIME),
            (DEFAULT_EPOCH_SECS as i128 + 5) * NS as i128
        );
        assert_eq!(c.read_on(0, libc::CLOCK_MONOTONIC), 105 * NS as i128);
        let abs = c.read_on(0, libc::CLOCK_MONOTONIC) + 2 * NS as i128;
        assert_eq!(c.deadline_on(0, libc::CLOCK_MONOTONIC, abs), 7 * NS);
    }

    #[test]
    fn host_clocks_jump_and_drift_alone() {
        let mut c = VClock::new(0);
        c.advance_by(NS);
        c.jump(1, -2 * NS as i64);
        assert_eq!(c.read_on(1, libc::CLOCK_REALTIME), -(NS as i128));
        assert_eq!(c.read_on(1, libc::CLOCK_MONOTONIC), 101 * NS as i128);
        assert_eq!(c.read_on(0, libc::CLOCK_REALTIME), NS as i128);
        // 10% fast from t=1s: after 10 more run seconds it has gained 1 s.
        c.set_drift(2, 100_000);
        c.advance_by(10 * NS);
        assert_eq!(c.read_on(2, libc::CLOCK_MONOTONIC), 112 * NS as i128);
        // A 1.1 s sleep on that host takes 1 s of run time.
        assert_eq!(c.span_on(2, 1_100_000_000), NS);
        c.set_drift(2, 0);
        c.advance_by(NS);
        assert_eq!(c.read_on(2, libc::CLOCK_MONOTONIC), 113 * NS as i128);
    }
}
