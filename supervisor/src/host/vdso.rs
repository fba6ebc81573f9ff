//! The faultline vDSO: an ELF image (built from `vdso/vdso.c`) copied over
//! the kernel's vDSO of every simulated process at exec, so that glibc's and
//! Go's clock reads are answered in-process from a time page the supervisor
//! writes, instead of costing a ptrace stop each.
//!
//! The kernel's vDSO mapping is sealed (mprotect fails), so the time page is
//! a separate page the supervisor has the process map at exec, at a fixed
//! low address (`fl_page_addr` in the image), and maps too
//! (`host::timepage`). Before it resumes a thread the supervisor rewrites
//! the page's clocks if virtual time moved since the last write to that
//! address space. Every `every`-th read still
//! traps (the image counts reads in the page), and the trapping path counts
//! the same way, so a run's trace is the same with the vDSO on or off.

use std::io;
use std::ops::Range;
use std::sync::OnceLock;

use crate::host::timepage::{ShareError, Store, Target, PAGE_LEN};
use crate::host::tracee;
use crate::sim::memory::Memory;

/// The image as built by build.rs.
const IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/faultline-vdso.so"));

// Offsets of the time page's fields (struct fl_time in vdso.c).
const OFF_CLOCKS: u64 = 0; // mono_ns: u64, real_ns: i64
const OFF_READS: u64 = 16; // reads: u32
const OFF_EVERY: u64 = 20; // every: u32
const OFF_CHANNEL_CALL: u64 = 24; // channel_call: u64

/// The symbols glibc and the Go runtime look up, all at version LINUX_2.6.
pub const EXPORTS: [&str; 4] = [
    "__vdso_clock_gettime",
    "__vdso_gettimeofday",
    "__vdso_time",
    "__vdso_getcpu",
];

/// Where the parts of the image are, relative to its load address.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Where the time page is mapped in every process (`fl_page_addr`).
    time_page: u64,
    /// Offset of `fl_inject`: `mov r12, rax; syscall; int3`, to make the
    /// process map the time page (`host::inject`).
    inject: u64,
    /// The code, to tell the image's own trapping reads from the program's.
    text: Range<u64>,
}

/// Why the image cannot stand in for the kernel's vDSO (what glibc's and
/// Go's vDSO parsers would trip on, or a symbol the supervisor needs).
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// goblin cannot parse it.
    #[error("not an ELF image: {0}")]
    NotElf(#[from] goblin::error::Error),
    /// Not exactly one PT_LOAD, or not at address and offset 0.
    #[error("the image must be one PT_LOAD at address 0")]
    Load,
    /// The dynamic section the parsers read is missing.
    #[error("the image has no PT_DYNAMIC")]
    NoDynamic,
    /// The image needs relocating, which no vDSO parser does.
    #[error("the image has relocations")]
    Relocations,
    /// An exported function is missing.
    #[error("the image does not export {0}")]
    Export(&'static str),
    /// A symbol the supervisor uses is missing.
    #[error("the image has no {0} symbol")]
    Symbol(&'static str),
    /// `fl_page_addr` holds no page-aligned address.
    #[error("fl_page_addr is not a page address")]
    PageAddress,
    /// `fl_inject` is not the stub the supervisor jumps to.
    #[error("fl_inject is not `mov %r12, %rax; syscall; int3`")]
    Inject,
    /// No .text section to tell the image's own reads by.
    #[error("the image has no .text")]
    NoText,
}

/// The image's layout, validated once; an error says why the image cannot
/// be used (and clock reads then all trap).
pub fn layout() -> Result<&'static Layout, &'static ImageError> {
    static LAYOUT: OnceLock<Result<Layout, ImageError>> = OnceLock::new();
    LAYOUT.get_or_init(|| inspect(IMAGE)).as_ref()
}

/// Checks what the vDSO parsers of glibc and Go rely on: one PT_LOAD at
/// address 0 whose addresses are file offsets, a PT_DYNAMIC, no relocations,
/// the exported functions, and the two symbols the supervisor uses.
fn inspect(image: &[u8]) -> Result<Layout, ImageError> {
    use goblin::elf::program_header::{PT_DYNAMIC, PT_LOAD};
    let elf = goblin::elf::Elf::parse(image)?;
    let loads: Vec<_> = elf
        .program_headers
        .iter()
        .filter(|p| p.p_type == PT_LOAD)
        .collect();
    if loads.len() != 1 || loads[0].p_vaddr != 0 || loads[0].p_offset != 0 {
        return Err(ImageError::Load);
    }
    if !elf.program_headers.iter().any(|p| p.p_type == PT_DYNAMIC) {
        return Err(ImageError::NoDynamic);
    }
    if !elf.dynrelas.is_empty() || !elf.dynrels.is_empty() || !elf.pltrelocs.is_empty() {
        return Err(ImageError::Relocations);
    }
    for name in EXPORTS {
        let found = elf.dynsyms.iter().any(|s| {
            s.is_function() && s.st_value != 0 && elf.dynstrtab.get_at(s.st_name) == Some(name)
        });
        if !found {
            return Err(ImageError::Export(name));
        }
    }
    let symbol = |name: &'static str| {
        elf.syms
            .iter()
            .find(|s| elf.strtab.get_at(s.st_name) == Some(name))
            .map(|s| s.st_value)
            .ok_or(ImageError::Symbol(name))
    };
    let at = symbol("fl_page_addr")? as usize;
    let time_page = image
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .filter(|&a| a != 0 && a % PAGE_LEN == 0)
        .ok_or(ImageError::PageAddress)?;
    let inject = symbol("fl_inject")?;
    const STUB: [u8; 6] = [0x4c, 0x89, 0xe0, 0x0f, 0x05, 0xcc]; // mov %r12,%rax; syscall; int3
    if image.get(inject as usize..inject as usize + STUB.len()) != Some(&STUB) {
        return Err(ImageError::Inject);
    }
    let text = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
        .map(|s| s.sh_addr..s.sh_addr + s.sh_size)
        .ok_or(ImageError::NoText)?;
    Ok(Layout {
        time_page,
        inject,
        text,
    })
}

/// Bytes of the kernel's vDSO mapping (the same for every process of this
/// kernel): the image must fit in it. 0 if there is none.
pub fn kernel_vdso_len() -> u64 {
    static LEN: OnceLock<u64> = OnceLock::new();
    *LEN.get_or_init(|| {
        super::maps::own()
            .and_then(|maps| maps.into_iter().find(|m| m.path == "[vdso]"))
            .and_then(|m| m.hi.checked_sub(m.lo))
            .unwrap_or(0)
    })
}

/// The clocks as the page holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clocks {
    /// CLOCK_MONOTONIC in ns.
    pub mono_ns: u64,
    /// CLOCK_REALTIME in ns since 1970.
    pub real_ns: i64,
}

impl Clocks {
    fn bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.mono_ns.to_le_bytes());
        b[8..].copy_from_slice(&self.real_ns.to_le_bytes());
        b
    }
}

/// The name of the time page's memfd, written after the image in the vDSO
/// mapping for the process's `memfd_create` to read.
const MEMFD_NAME: &[u8] = b"faultline-time\0";

/// Bytes of the page the supervisor reads and writes (struct fl_time).
const HEAD_LEN: usize = 32;

/// The faultline vDSO installed in one address space.
#[derive(Debug)]
pub struct VdsoPage {
    /// Where the image is mapped.
    base: u64,
    /// The clocks last written.
    written: Option<Clocks>,
    /// Its time page.
    page: Page,
}

/// Whether the address space has its own time page yet.
#[derive(Debug)]
enum Page {
    /// Mapped in the process.
    Mapped(Store),
    /// A forked child's before it first runs: it still maps its parent's
    /// shared page, and gets its own, holding these bytes (the parent's
    /// at the fork), before it runs.
    Forked([u8; HEAD_LEN]),
}

impl VdsoPage {
    /// Copies the image over the kernel's vDSO at `base` in process `pid`
    /// (stopped at its exec), has the process map its time page and writes
    /// the first clocks. With the reason the page is not shared with the
    /// supervisor, if it is not.
    pub fn install(
        pid: i32,
        base: u64,
        every: u32,
        clocks: Clocks,
    ) -> io::Result<(VdsoPage, Option<ShareError>)> {
        let layout = layout().map_err(|e| io::Error::other(e.to_string()))?;
        let len = kernel_vdso_len() as usize;
        let needed = IMAGE.len() + MEMFD_NAME.len();
        if len < needed {
            return Err(io::Error::other(format!(
                "the kernel's vDSO ({len} bytes) is smaller than the image and its page's name ({needed})"
            )));
        }
        let mut bytes = IMAGE.to_vec();
        bytes.extend_from_slice(MEMFD_NAME);
        bytes.resize(len, 0);
        tracee::Process(pid).write_mem(base, &bytes)?;
        let (store, unshared) =
            Store::map(pid, target(base, false)).map_err(|e| io::Error::other(e.to_string()))?;
        let mut head = [0u8; HEAD_LEN];
        head[..16].copy_from_slice(&clocks.bytes());
        head[OFF_EVERY as usize..][..4].copy_from_slice(&every.to_le_bytes());
        store.write(pid, layout.time_page, 0, &head)?;
        let page = VdsoPage {
            base,
            written: Some(clocks),
            page: Page::Mapped(store),
        };
        Ok((page, unshared))
    }

    /// The page of a child forked (not vforked) from this address space,
    /// as the parent's is now. A private page was copied by the fork; a
    /// shared one must be replaced by the child's own before it runs.
    pub fn fork(&self) -> VdsoPage {
        let page = match &self.page {
            Page::Mapped(Store::Private) => Page::Mapped(Store::Private),
            Page::Mapped(shared) => {
                let mut head = [0u8; HEAD_LEN];
                // A shared page is read in the supervisor: it cannot fail.
                let _ = shared.read(0, page_addr(), 0, &mut head);
                Page::Forked(head)
            }
            Page::Forked(head) => Page::Forked(*head),
        };
        VdsoPage {
            base: self.base,
            written: self.written,
            page,
        }
    }

    /// Makes the page of `pid`'s address space show `clocks` (one small
    /// write when they changed). A forked child, stopped where it was
    /// forked, gets its own page first; with the reason that page is not
    /// shared with the supervisor, if it is not.
    pub fn refresh(&mut self, pid: i32, clocks: Clocks) -> Option<ShareError> {
        let mut unshared = None;
        if let Page::Forked(head) = self.page {
            let store = match Store::map(pid, target(self.base, true)) {
                Ok((store, why)) => {
                    unshared = why;
                    store
                }
                Err(why) => {
                    unshared = Some(why);
                    Store::Private
                }
            };
            let _ = store.write(pid, page_addr(), 0, &head);
            self.page = Page::Mapped(store);
        }
        if self.written != Some(clocks) && self.write(pid, OFF_CLOCKS, &clocks.bytes()).is_ok() {
            self.written = Some(clocks);
        }
        unshared
    }

    /// The address of the image's `fl_inject`, where calls are run in the
    /// process (`host::inject`).
    pub fn inject_stub(&self) -> u64 {
        target(self.base, false).stub
    }

    /// True if a system call that stopped with `rip` was made by the image
    /// (its every-`every`-th read, already counted).
    pub fn made_call(&self, rip: u64) -> bool {
        let layout = layout().expect("installed, so valid");
        rip.checked_sub(self.base)
            .is_some_and(|off| layout.text.contains(&off))
    }

    /// Has the image make the reads that must reach the supervisor by
    /// calling `stub` (a patched Go runtime's channel stub) instead of
    /// trapping.
    pub fn set_channel_call(&mut self, pid: i32, stub: u64) -> io::Result<()> {
        self.write(pid, OFF_CHANNEL_CALL, &stub.to_le_bytes())
    }

    /// Reads the page's count of reads since the last one that trapped.
    pub fn reads(&self, pid: i32) -> io::Result<u32> {
        let mut n = [0u8; 4];
        match &self.page {
            Page::Mapped(store) => store.read(pid, page_addr(), OFF_READS, &mut n)?,
            Page::Forked(head) => n.copy_from_slice(&head[OFF_READS as usize..][..4]),
        }
        Ok(u32::from_le_bytes(n))
    }

    /// Sets that count (after a read the program made without the image).
    pub fn set_reads(&mut self, pid: i32, n: u32) -> io::Result<()> {
        self.write(pid, OFF_READS, &n.to_le_bytes())
    }

    /// Writes `data` at `off` in the page, or in the bytes a forked child's
    /// page will hold.
    fn write(&mut self, pid: i32, off: u64, data: &[u8]) -> io::Result<()> {
        match &mut self.page {
            Page::Mapped(store) => store.write(pid, page_addr(), off, data),
            Page::Forked(head) => {
                head[off as usize..][..data.len()].copy_from_slice(data);
                Ok(())
            }
        }
    }
}

/// Where the time page goes in a process whose image is at `base`; an
/// existing mapping is replaced if `replace`.
fn target(base: u64, replace: bool) -> Target {
    let layout = layout().expect("installed, so valid");
    Target {
        stub: base + layout.inject,
        addr: layout.time_page,
        name: base + IMAGE.len() as u64,
        replace,
    }
}

fn page_addr() -> u64 {
    layout().expect("installed, so valid").time_page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_image_is_what_vdso_parsers_expect() {
        let layout = inspect(IMAGE).expect("valid image");
        assert!(layout.text.contains(&layout.inject));
        assert!(
            layout.time_page < 0x40_0000,
            "below executables' load address"
        );
        assert!(IMAGE.len() <= 8192, "fits a two-page vDSO");
    }

    #[test]
    fn exports_carry_the_linux_2_6_version() {
        let elf = goblin::elf::Elf::parse(IMAGE).unwrap();
        let verdef = elf.verdef.as_ref().expect("version definitions");
        let names: Vec<&str> = verdef
            .iter()
            .filter_map(|d| d.iter().next())
            .filter_map(|aux| elf.dynstrtab.get_at(aux.vda_name))
            .collect();
        assert!(names.contains(&"LINUX_2.6"), "{names:?}");
        let versym = elf.versym.as_ref().expect("symbol versions");
        for (i, sym) in elf.dynsyms.iter().enumerate() {
            if sym.is_function() {
                let v = versym.get_at(i).expect("versym entry");
                assert_eq!(v.version(), 2, "every function is at LINUX_2.6");
            }
        }
    }

    #[test]
    fn a_broken_image_is_refused_with_a_reason() {
        assert!(inspect(&IMAGE[..64]).is_err());
        let mut no_trap = IMAGE.to_vec();
        let inject = inspect(IMAGE).unwrap().inject as usize;
        no_trap[inject + 5] = 0x90;
        assert_eq!(
            inspect(&no_trap).unwrap_err().to_string(),
            "fl_inject is not `mov %r12, %rax; syscall; int3`"
        );
    }
}
