//! Rewriting the auxiliary vector of a freshly exec'd program: replace the
//! kernel's vDSO with faultline's (or hide it, so every clock read traps) and
//! replace the AT_RANDOM bytes with seeded ones (glibc's stack guard and Go's
//! hash seeds come from them).

use std::io;

use crate::host::tracee;
use crate::sim::memory::Memory;

const AT_NULL: u64 = 0;
const AT_IGNORE: u64 = 1;
const AT_BASE: u64 = 7;
const AT_ENTRY: u64 = 9;
const AT_RANDOM: u64 = 25;
const AT_SYSINFO_EHDR: u64 = 33;

/// What the auxv of a fresh image tells about it.
#[derive(Debug, Default)]
pub struct Image {
    /// The program name (argv[0]) for reports.
    pub name: String,
    /// Where the dynamic loader is mapped (AT_BASE; 0 for a static program).
    pub interp_base: u64,
    /// The program's entry point as loaded (AT_ENTRY): with the ELF entry,
    /// where a position-independent executable was put.
    pub entry: u64,
}

/// Rewrites the auxv of `pid`, whose initial stack pointer is `rsp`.
/// `install_vdso` is given the kernel vDSO's address and returns true if it
/// put faultline's image there; otherwise the entry is hidden.
pub fn rewrite(
    pid: i32,
    rsp: u64,
    random: [u8; 16],
    install_vdso: &mut dyn FnMut(u64) -> bool,
) -> io::Result<Image> {
    let word = |addr: u64| tracee::Process(pid).read_val::<u64>(addr);
    let argc = word(rsp)?;
    let argv0 = word(rsp + 8)?;
    let name = if argv0 != 0 {
        String::from_utf8_lossy(&tracee::Process(pid).read_cstr(argv0, 256)?).into_owned()
    } else {
        String::new()
    };
    // Skip argc, argv[] and its NULL, then envp[] up to its NULL.
    let mut p = rsp + 8 * (argc + 2);
    while word(p)? != 0 {
        p += 8;
    }
    p += 8;
    let mut image = Image {
        name,
        ..Image::default()
    };
    loop {
        let key = word(p)?;
        match key {
            AT_NULL => break,
            AT_BASE => image.interp_base = word(p + 8)?,
            AT_ENTRY => image.entry = word(p + 8)?,
            AT_SYSINFO_EHDR if !install_vdso(word(p + 8)?) => {
                tracee::Process(pid).write_val(p, &AT_IGNORE)?;
            }
            AT_RANDOM => {
                let at = word(p + 8)?;
                tracee::Process(pid).write_mem(at, &random)?;
            }
            _ => {}
        }
        p += 16;
    }
    Ok(image)
}

/// The range covered by every mapping of the file mapped at `start` in
/// `pid` (all segments of the dynamic loader, given AT_BASE).
pub fn mapping_of_file_at(pid: i32, start: u64) -> Option<(u64, u64)> {
    if start == 0 {
        return None;
    }
    let maps = super::maps::of(pid)?;
    let named = || maps.iter().filter(|m| !m.path.is_empty());
    let file = &named().find(|m| m.lo == start)?.path;
    let of_file = named().filter(|m| &m.path == file);
    let lo = of_file.clone().map(|m| m.lo).min()?;
    let hi = of_file.map(|m| m.hi).max()?;
    Some((lo, hi))
}
