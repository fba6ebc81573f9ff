//! Rewriting the auxiliary vector of a freshly exec'd program: replace the
//! kernel's vDSO with faultline's (or hide it, so every clock read traps) and
//! replace the AT_RANDOM bytes with seeded ones (glibc's stack guard and Go's
//! hash seeds come from them).

use std::io;

use crate::tracee;

const AT_NULL: u64 = 0;
const AT_IGNORE: u64 = 1;
const AT_RANDOM: u64 = 25;
const AT_SYSINFO_EHDR: u64 = 33;

/// Rewrites the auxv of `pid`, whose initial stack pointer is `rsp`.
/// `install_vdso` is given the kernel vDSO's address and returns true if it
/// put faultline's image there; otherwise the entry is hidden.
/// Returns the program name (argv[0]) for reports.
pub fn rewrite(
    pid: i32,
    rsp: u64,
    random: [u8; 16],
    install_vdso: &mut dyn FnMut(u64) -> bool,
) -> io::Result<String> {
    let word = |addr: u64| tracee::read_val::<u64>(pid, addr);
    let argc = word(rsp)?;
    let argv0 = word(rsp + 8)?;
    let name = if argv0 != 0 {
        String::from_utf8_lossy(&tracee::read_cstr(pid, argv0, 256)?).into_owned()
    } else {
        String::new()
    };
    // Skip argc, argv[] and its NULL, then envp[] up to its NULL.
    let mut p = rsp + 8 * (argc + 2);
    while word(p)? != 0 {
        p += 8;
    }
    p += 8;
    loop {
        let key = word(p)?;
        match key {
            AT_NULL => break,
            AT_SYSINFO_EHDR if !install_vdso(word(p + 8)?) => {
                tracee::write_val(pid, p, &AT_IGNORE)?;
            }
            AT_RANDOM => {
                let at = word(p + 8)?;
                tracee::write_mem(pid, at, &random)?;
            }
            _ => {}
        }
        p += 16;
    }
    Ok(name)
}
