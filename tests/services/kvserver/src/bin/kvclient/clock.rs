//! History timestamps: raw `CLOCK_MONOTONIC` nanoseconds. `Instant` would
//! do within one process, but it is opaque, and a crash test appends the
//! histories of several client processes (one per run, or several clients)
//! to one file: the checker can only order their operations if all share a
//! time base. Under faultline `CLOCK_MONOTONIC` is the run's virtual clock
//! (100 s plus virtual time since the run started), the same in every
//! process; natively it is time since boot, also shared.

use std::os::raw::{c_int, c_long};

const CLOCK_MONOTONIC: c_int = 1;

/// `struct timespec` on Linux (`time_t` and the nanoseconds are `long`).
#[repr(C)]
struct Timespec {
    tv_sec: c_long,
    tv_nsec: c_long,
}

extern "C" {
    /// From the C library std already links.
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
}

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> u64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC) cannot fail");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
