//! SIGINT and SIGTERM while `faultline run` works: the handler only notes
//! the signal; the run loop sees it between two steps, ends the seed, and the
//! command writes a partial report, keeps the artifacts and exits 128+N.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal received, 0 while none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(sig: libc::c_int) {
    RECEIVED.store(sig, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM (restarting interrupted calls,
/// so the supervisor's waits are not disturbed).
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler that only stores an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = note as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The signal that asked faultline to stop, if one did.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}
