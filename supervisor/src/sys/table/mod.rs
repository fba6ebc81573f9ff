//! The syscall table: every x86-64 system call with its family and how
//! faultline supports it. It is the one source of the seccomp filter's
//! trapped set, of the names in traces and reports, of the refusals the
//! dispatcher makes by default, and of docs/limitations.md's table (printed
//! by the hidden `faultline syscall-table` verb, checked by tests/tests/docs.rs).
//! It fails closed: a call the table does not know (a number past
//! [`LAST`]) is trapped and refused.

mod rows;

use std::fmt::Write as _;

pub use rows::ROWS;

/// How many system calls x86-64 has up to [`LAST`]: 0..=334 and 424..=461
/// (none is numbered [`UNUSED_FROM`]`..`[`USED_AGAIN`]). `ROWS` has exactly
/// this many rows, or the build fails.
pub const COUNT: usize = (UNUSED_FROM + (LAST - USED_AGAIN + 1)) as usize;

/// The first number of the range x86-64 left unused (335..=423).
const UNUSED_FROM: i64 = 335;
/// The first number in use after that range.
const USED_AGAIN: i64 = 424;

/// The highest call number the table knows. Numbers past it are trapped and
/// refused with ENOSYS: a kernel newer than the table may add calls that
/// escape the models.
pub const LAST: i64 = 461;

/// What a call does to the simulation, to group it in docs and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Clocks, sleeps and timers.
    Time,
    /// Scheduling, futexes and CPU placement.
    Sched,
    /// Processes, threads, credentials and limits.
    Process,
    /// Signals.
    Signal,
    /// Address space.
    Memory,
    /// Descriptors and the data that moves through them.
    Descriptor,
    /// poll, select and epoll.
    Readiness,
    /// Sockets.
    Socket,
    /// Calls that create, change or make durable a node's files.
    Disk,
    /// File metadata and the namespace, read or changed in place.
    FileInfo,
    /// System V and POSIX message queues, semaphores and shared memory.
    Ipc,
    /// The machine: identity, randomness, mounts, modules, keys.
    System,
}

impl Family {
    /// The family's name in the docs.
    pub fn label(self) -> &'static str {
        match self {
            Family::Time => "time",
            Family::Sched => "scheduling",
            Family::Process => "processes",
            Family::Signal => "signals",
            Family::Memory => "memory",
            Family::Descriptor => "descriptors",
            Family::Readiness => "readiness",
            Family::Socket => "sockets",
            Family::Disk => "files (disk)",
            Family::FileInfo => "file metadata",
            Family::Ipc => "ipc",
            Family::System => "system",
        }
    }
}

/// How faultline supports a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Trapped: the supervisor answers it, or lets the kernel run it and
    /// tells its models what changed.
    Modelled,
    /// Not trapped: the kernel runs it and its answer is the same on every
    /// run of a seed.
    Passed,
    /// Trapped and passed to the kernel, whose answer is the host's: every
    /// call is counted and reported as a host-state read (one line per kind
    /// and host, report.json's `host_state`), and the run is marked
    /// possibly non-deterministic.
    Reported,
    /// Trapped and always refused with `errno` and a report line (`why`).
    Refused {
        /// What the program gets.
        errno: i32,
        /// Why, for the report line and the docs.
        why: &'static str,
    },
    /// Trapped: refused with `errno` and a report line when it touches a
    /// node's `data_dir` file, a simulated socket or a simulated pipe,
    /// passed otherwise.
    Guarded {
        /// What the program gets when it is refused.
        errno: i32,
        /// Why, for the report line and the docs.
        why: &'static str,
    },
}

impl Support {
    /// Whether the seccomp filter sends the call to the supervisor.
    pub const fn trapped(self) -> bool {
        !matches!(self, Support::Passed)
    }

    /// The support level's name in the docs.
    pub fn label(self) -> &'static str {
        match self {
            Support::Modelled => "modelled",
            Support::Passed => "passed",
            Support::Reported => "reported",
            Support::Refused { .. } => "refused",
            Support::Guarded { .. } => "guarded",
        }
    }
}

/// One system call.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// Its x86-64 number.
    pub nr: i64,
    /// Its `SYS_` constant's name; [`Row::name`] drops the prefix.
    ident: &'static str,
    /// What it touches.
    pub family: Family,
    /// How faultline supports it.
    pub support: Support,
}

impl Row {
    /// A row from a `SYS_` constant and its name (see `rows!`).
    const fn new(nr: i64, ident: &'static str, family: Family, support: Support) -> Row {
        Row {
            nr,
            ident,
            family,
            support,
        }
    }

    /// The call's name, as the kernel's table spells it.
    pub fn name(&self) -> &'static str {
        &self.ident["SYS_".len()..]
    }
}

// The build fails unless the rows are in strictly increasing order, every
// number is an x86-64 call (not in the unused 335..=423) and every name is
// a `SYS_` constant's: with `COUNT` rows, that is every call exactly once.
const _: () = {
    let mut i = 0;
    while i < COUNT {
        let nr = ROWS[i].nr;
        assert!(nr >= 0 && nr <= LAST && !(nr >= UNUSED_FROM && nr < USED_AGAIN));
        assert!(i == 0 || ROWS[i - 1].nr < nr);
        let b = ROWS[i].ident.as_bytes();
        assert!(b.len() > 4 && b[0] == b'S' && b[1] == b'Y' && b[2] == b'S' && b[3] == b'_');
        i += 1;
    }
};

/// The row of call `nr`, if the table knows it: an index, not a search
/// (every call is looked up here), since the table has every number in
/// order, with the unused range left out.
pub fn row(nr: i64) -> Option<&'static Row> {
    let i = match nr {
        0..UNUSED_FROM => nr,
        USED_AGAIN..=LAST => nr - (USED_AGAIN - UNUSED_FROM),
        _ => return None,
    };
    Some(&ROWS[i as usize])
}

/// How call `nr` is supported; a number past the table is refused.
pub fn support(nr: i64) -> Support {
    row(nr).map(|r| r.support).unwrap_or(Support::Refused {
        errno: libc::ENOSYS,
        why: "a call newer than faultline's syscall table",
    })
}

/// The numbers the seccomp filter traps, in increasing order. Numbers past
/// [`LAST`] are trapped too (the filter adds one compare for them).
pub fn trapped_numbers() -> Vec<i64> {
    ROWS.iter()
        .filter(|r| r.support.trapped())
        .map(|r| r.nr)
        .collect()
}

/// The seccomp filter the table asks for: its trapped calls and every
/// number past [`LAST`] stop in the supervisor (`fast_path`: see
/// `host::seccomp::build_filter`).
pub fn seccomp_filter(fast_path: Option<crate::host::seccomp::FastPath>) -> Vec<libc::sock_filter> {
    crate::host::seccomp::build_filter(&trapped_numbers(), LAST, fast_path)
}

/// The calls the notification path takes (`host::notify`): the hottest
/// ones whose handlers need only their arguments and the caller's memory,
/// never its registers, and always decide them (they are scheduling
/// points, never answered in place or passed with changed registers).
pub const NOTIFIED: [i64; 4] = [
    libc::SYS_futex,
    libc::SYS_nanosleep,
    libc::SYS_clock_nanosleep,
    libc::SYS_sched_yield,
];

/// The filter installed beside [`seccomp_filter`] that sends the
/// [`NOTIFIED`] calls to its listener instead of a ptrace stop.
pub fn notify_filter() -> Vec<libc::sock_filter> {
    crate::host::seccomp::build_notify_filter(&NOTIFIED)
}

/// The name of call `nr`, for traces and reports.
pub fn name(nr: i64) -> &'static str {
    row(nr).map(Row::name).unwrap_or("unknown")
}

/// docs/limitations.md's syscall tables, as markdown: one line per support
/// level and family listing the calls, then the refused and guarded calls
/// with their errno and reason.
pub fn markdown() -> String {
    let mut out = String::from("| support | family | calls |\n|---|---|---|\n");
    let levels = ["modelled", "reported", "refused", "guarded", "passed"];
    for level in levels {
        let mut families: Vec<Family> = ROWS
            .iter()
            .filter(|r| r.support.label() == level)
            .map(|r| r.family)
            .collect();
        families.sort();
        families.dedup();
        for family in families {
            let names: Vec<String> = ROWS
                .iter()
                .filter(|r| r.support.label() == level && r.family == family)
                .map(|r| format!("`{}`", r.name()))
                .collect();
            let _ = writeln!(
                out,
                "| {level} | {} | {} |",
                family.label(),
                names.join(", ")
            );
        }
    }
    out.push_str("\n| call | number | support | errno | why |\n|---|---|---|---|---|\n");
    for r in &ROWS {
        if let Support::Refused { errno, why } | Support::Guarded { errno, why } = r.support {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {why} |",
                r.name(),
                r.nr,
                r.support.label(),
                super::errno_name(errno)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;
