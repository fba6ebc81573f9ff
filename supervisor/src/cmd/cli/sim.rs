//! The simulation settings `exec` and `run` share (one flattened group),
//! which report.json records and `replay` and `run -j` workers reuse.

use clap::{Args, Parser};

/// Settings of the simulated machine, common to `exec` and `run`. They
/// shape a run, so report.json records them whole (a field added here is
/// recorded and reused by `replay` without further code) and `run -j`
/// hands them to its workers.
#[derive(Debug, Args, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SimArgs {
    /// Wall-clock time the program sees at the start (UTC, RFC 3339).
    #[arg(long, default_value = "2025-01-01T00:00:00Z", value_name = "TIME")]
    pub epoch: String,

    /// Number of CPUs the program is told it has (sched_getaffinity; GOMAXPROCS follows).
    #[arg(long, default_value_t = 2)]
    pub cpus: u32,

    /// Virtual time each scheduling step costs (lets clock-polling loops progress).
    #[arg(long, default_value = "1us", value_name = "DURATION")]
    pub step_cost: String,

    /// CPU time a thread may use without a trapped syscall before the
    /// watchdog preempts it (the run is then flagged possibly
    /// non-deterministic); a thread blocked in the kernel is preempted after
    /// three times this of wall time. Long enough for an ordinary burst of
    /// computation (a GC, a compaction); short, because a spin loop waiting
    /// for a thread faultline has stopped costs this much each time.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub spin_limit: String,

    /// How much later than asked a timed wait ends, as Linux's timer
    /// slack makes it (`prctl(PR_SET_TIMERSLACK)`, 50 µs for an ordinary
    /// thread): a sleep, futex wait or sigtimedwait ends this much after
    /// its time; a poll, select or epoll_wait this or 0.1% of its timeout
    /// (at most 100 ms), whichever is more. A wait whose time has already
    /// come ends at once. Runtimes that sleep microseconds at a time (Go's
    /// sysmon: 20 µs) then wake as often as natively. 0: every wait ends
    /// exactly at its time (what a report.json without this setting ran
    /// with).
    #[arg(long, default_value = "50us", value_name = "DURATION")]
    #[serde(default = "exact_timers")]
    pub timer_slack: String,

    /// Hide the vDSO instead of putting faultline's in each process: every
    /// clock read then costs a ptrace stop. The trace is the same either way;
    /// this is for comparing the two paths and for kernels whose vDSO is too
    /// small for faultline's image (that case falls back by itself).
    #[arg(long)]
    pub no_vdso: bool,

    /// Send the hottest modelled calls (futex, nanosleep, clock_nanosleep,
    /// sched_yield) to faultline as seccomp user notifications instead of
    /// ptrace stops, in every program, static and Go ones too. The trace is
    /// the same either way. A notified call costs less than a stop, but
    /// every remaining stop then costs two more system calls, so it pays
    /// only where those calls are most of a program's (futex-heavy C
    /// programs: 20% faster; the etcd harness: even; a socket ping-pong:
    /// 12% slower; README, Performance). Kernels before Linux 5.19 fall
    /// back to stops by themselves. Turns the --preload fast path off,
    /// unless --preload is given too (then this flag is ignored).
    #[arg(long)]
    pub notify: bool,

    /// Make the Go runtime's yield (runtime.gosched_m, reached by
    /// runtime.Gosched) a scheduling point: every Go program gets a
    /// breakpoint there, so a loop that yields while it waits for another
    /// thread gives way at the same instruction on every run instead of
    /// spinning until the watchdog preempts it (runtime.GC's wait for the
    /// last sweeper). Off by default: it costs thousands of stops per etcd
    /// seed, and the background sweeper's wait, the common spin, is a
    /// give-way point in every Go program anyway.
    #[arg(long)]
    pub go_yields: bool,

    /// The shared-memory fast path, on by default (the flag is kept for
    /// scripts; it wins over --notify). Dynamically linked C and Rust
    /// programs get faultline's LD_PRELOAD library: their socket, pipe and
    /// file reads and writes, epoll waits, polls, sleeps, yields, (through
    /// libc's `syscall`) futex calls, and the libc functions that make,
    /// look at and end sockets, files and directories (socket, connect,
    /// accept, open, stat, fsync, rename, unlink, close...) reach the
    /// supervisor over shared memory instead of a ptrace stop (they do see
    /// LD_PRELOAD and FAULTLINE_CHANNEL_FD in their environment); so do
    /// the calls glibc makes inside its own code once their `mov eax, NR;
    /// syscall` site is patched (at its first stop; other sites still
    /// stop), and the clock reads faultline's vDSO must send to faultline
    /// (every 64th). Go programs (static or
    /// cgo, not PIE) get no library: their runtime's futex, sleep, yield,
    /// epoll, read and write wrappers and package syscall's Syscall6 (its
    /// file, directory and socket calls) are patched at exec to make their
    /// calls over the same channel (and faultline's vDSO sends their
    /// trapping clock reads there). A call
    /// faultline passes to the kernel is made at one gate instruction the
    /// seccomp filter lets through. The trace is the same either way.
    /// While nearly every event of the programs comes over the channel,
    /// they get a host CPU of their own, both ends spin for each other, and
    /// a thread that gives way wakes the next one itself: the etcd harness
    /// runs about twice as fast as with --no-preload, on less CPU time
    /// (README, Performance).
    /// The library is libfaultline_preload.so next to faultline, or
    /// $FAULTLINE_PRELOAD; without it the run goes on without the fast
    /// path, with a warning.
    #[arg(long, overrides_with = "no_preload")]
    pub preload: bool,

    /// Turn the fast path off (see --preload): every modelled call is a
    /// ptrace stop, or a notification with --notify. The trace is the same.
    #[arg(long, overrides_with = "preload")]
    pub no_preload: bool,

    /// Every N-th clock read of a process is a scheduling point; the other
    /// reads are answered in place (by faultline's vDSO, without a ptrace
    /// stop). Each read still costs --step-cost, charged at the N-th, so
    /// loops that poll the clock see time move. 1 makes every read a
    /// scheduling point.
    #[arg(long, default_value_t = 64, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub clock_step_every: u32,

    /// A progress line on stderr every EVERY of wall time while a run goes
    /// on (its virtual time, events and virtual seconds per wall second):
    /// `auto` every 5 s when stderr is a terminal and one seed runs at a
    /// time, `0` never, or a duration (`1s`). It never changes the run.
    #[arg(long, default_value = crate::cmd::settings::PROGRESS_AUTO, value_name = "EVERY")]
    pub progress: String,

    /// Do not pin the supervisor and the program to one host CPU (pinning makes
    /// each ptrace stop about 3x cheaper; the program still sees --cpus CPUs).
    #[arg(long)]
    pub no_pin: bool,

    /// How the next thread is chosen at each scheduling point. `sticky`
    /// (the default): the thread that just ran goes on with probability
    /// --stay percent if it still can and did not call sched_yield,
    /// otherwise a uniform seeded choice — runs of a few steps, as a CPU's
    /// time slice gives, with a switch possible at every point and about
    /// half the thread switches of `random`, each a context switch for the
    /// programs (README, Performance). `random`: the uniform seeded choice
    /// every time (the shortest interleavings; the default before
    /// `sticky`, and what a report.json without this setting ran with).
    /// `pct`: probabilistic concurrency testing — each thread gets
    /// a seeded priority, the highest runnable one runs, and at
    /// --pct-depth minus 1 seeded steps among the first --pct-steps the
    /// running thread drops below all others (finds ordering bugs of small
    /// depth with a known probability, with far fewer thread switches). A
    /// thread that runs 100 steps in a row while others wait is lowered too,
    /// so a polling loop cannot starve the rest, and so is one that yields
    /// (`sched_yield`, a Go runtime yield), which waits for another thread
    /// to act. Recorded in report.json.
    #[arg(long, value_enum, default_value_t = PolicyName::Sticky, value_name = "POLICY")]
    #[serde(default = "PolicyName::before_sticky")]
    pub schedule_policy: PolicyName,

    /// With --schedule-policy sticky: the percent chance (0-99) that the
    /// thread that just ran goes on; 0 is `random`'s choice.
    #[arg(long, default_value_t = 80, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=99))]
    pub stay: u8,

    /// With --schedule-policy pct: the bug depth d (d - 1 priority change points).
    #[arg(long, default_value_t = 3, value_name = "D", value_parser = clap::value_parser!(u32).range(1..))]
    pub pct_depth: u32,

    /// With --schedule-policy pct: the change points are drawn from the first K scheduling steps.
    #[arg(long, default_value_t = 20_000, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub pct_steps: u64,
}

/// `--schedule-policy` values.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PolicyName {
    /// Uniformly random at every scheduling point.
    Random,
    /// The thread that just ran goes on with probability --stay.
    Sticky,
    /// Probabilistic concurrency testing (seeded priorities, change points).
    Pct,
}

impl PolicyName {
    /// The policy of runs recorded before `sticky` was the default, whose
    /// report.json has no `schedule_policy` setting.
    fn before_sticky() -> PolicyName {
        PolicyName::Random
    }
}

/// The timer slack of runs recorded before `--timer-slack` existed, whose
/// report.json has no such setting: none.
fn exact_timers() -> String {
    "0".into()
}

impl SimArgs {
    /// Whether the run uses the shared-memory fast path: by default, unless
    /// turned off by --no-preload or --notify (an explicit --preload wins).
    pub fn fast_path(&self) -> bool {
        self.preload || !(self.no_preload || self.notify)
    }

    /// The scheduling policy these flags select.
    pub fn schedule(&self) -> crate::sim::scheduler::SchedulePolicy {
        use crate::sim::scheduler::SchedulePolicy;
        match self.schedule_policy {
            PolicyName::Sticky => SchedulePolicy::Sticky { stay: self.stay },
            PolicyName::Random => SchedulePolicy::Random,
            PolicyName::Pct => SchedulePolicy::Pct {
                depth: self.pct_depth,
                steps: self.pct_steps,
            },
        }
    }
}

impl Default for SimArgs {
    /// The flags' defaults (what an old report.json without a setting ran with).
    fn default() -> Self {
        #[derive(Parser)]
        struct Defaults {
            #[command(flatten)]
            sim: SimArgs,
        }
        Defaults::parse_from(["faultline"]).sim
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_without_a_policy_or_slack_replays_random_and_exact_and_new_runs_are_not() {
        let old: SimArgs = serde_json::from_str(r#"{"cpus": 2}"#).expect("settings");
        assert_eq!(old.schedule_policy, PolicyName::Random);
        assert_eq!(old.timer_slack, "0");
        let new = SimArgs::default();
        assert_eq!(new.timer_slack, "50us");
        assert_eq!(
            new.schedule(),
            crate::sim::scheduler::SchedulePolicy::Sticky { stay: 80 }
        );
        let again: SimArgs =
            serde_json::from_str(&serde_json::to_string(&new).expect("json")).expect("settings");
        assert_eq!(again.schedule(), new.schedule());
    }
}
