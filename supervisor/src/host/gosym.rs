//! Finds functions of a Go program's runtime by name, from the function
//! table (pclntab) every Go executable carries for its own stack traces.
//! Stripping removes the ELF symbol table but never this table, so Debian's
//! stripped Go binaries (etcd) are covered too. Supported: the table format
//! of Go 1.18 and later.

use std::os::unix::fs::FileExt;
use std::path::Path;

use goblin::container::{Container, Ctx, Endian};
use goblin::elf::{header, Elf, SectionHeader};

/// Why a program's Go functions could not be read. A program that is not
/// Go is not an error (see [`find_functions`]).
#[derive(Debug, thiserror::Error)]
pub enum GoSymError {
    /// The executable could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// The executable is not an ELF file goblin can parse.
    #[error("{path}: not an ELF executable: {why}")]
    Elf { path: String, why: String },
    /// The table is there, but in a format of a Go release before 1.18.
    #[error("{path}: pclntab magic {magic:#x} (a Go release before 1.18) is not supported")]
    OldGo { path: String, magic: u32 },
    /// The table is cut short or points outside itself.
    #[error("{path}: malformed pclntab ({why})")]
    Malformed { path: String, why: &'static str },
}

/// The wanted functions of one Go executable, at their link-time addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoFunctions {
    /// The ELF entry point (with AT_ENTRY, the load bias of a PIE).
    pub entry: u64,
    /// Whether the executable is position independent (ET_DYN).
    pub pie: bool,
    /// (name, entry address) of each wanted function found.
    pub found: Vec<(String, u64)>,
}

/// Magic numbers of the pclntab header of Go 1.18-1.19 and of 1.20 on.
const MAGICS: [u32; 2] = [0xffff_fff0, 0xffff_fff1];

/// Looks `names` up in the Go function table of the executable at `path`.
/// Ok(None): not a Go program (no `.gopclntab` section). Only the ELF
/// header, the section headers and the sections looked at are read: the
/// programs are often tens of megabytes (debug info), and most are not Go.
pub fn find_functions(path: &Path, names: &[&str]) -> Result<Option<GoFunctions>, GoSymError> {
    let shown = path.display().to_string();
    let read_error = |source| GoSymError::Read {
        path: shown.clone(),
        source,
    };
    let not_elf = |why: String| GoSymError::Elf {
        path: shown.clone(),
        why,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let read_at = |at: u64, len: usize| -> Result<Vec<u8>, GoSymError> {
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, at).map_err(read_error)?;
        Ok(buf)
    };
    let mut ident = [0u8; header::header64::SIZEOF_EHDR];
    let got = file.read_at(&mut ident, 0).map_err(read_error)?;
    let header = Elf::parse_header(&ident[..got]).map_err(|e| not_elf(e.to_string()))?;
    let ctx = Ctx::new(
        if header.e_ident[header::EI_CLASS] == header::ELFCLASS64 {
            Container::Big
        } else {
            Container::Little
        },
        Endian::from(header.e_ident[header::EI_DATA] == header::ELFDATA2LSB),
    );
    let count = usize::from(header.e_shnum);
    let table = read_at(header.e_shoff, count * usize::from(header.e_shentsize))?;
    let sections =
        SectionHeader::parse_from(&table, 0, count, ctx).map_err(|e| not_elf(e.to_string()))?;
    let names_of = sections
        .get(usize::from(header.e_shstrndx))
        .ok_or_else(|| not_elf("no section name table".into()))?;
    let section_names = read_at(names_of.sh_offset, names_of.sh_size as usize)?;
    let name_of = |s: &SectionHeader| {
        let rest = section_names.get(s.sh_name..)?;
        Some(&rest[..rest.iter().position(|&b| b == 0)?])
    };
    let section = |name: &[u8]| sections.iter().find(|s| name_of(s) == Some(name));
    let Some(table) = section(b".gopclntab").or_else(|| section(b".data.rel.ro.gopclntab")) else {
        return Ok(None);
    };
    let malformed = |why| GoSymError::Malformed {
        path: shown.clone(),
        why,
    };
    let len = usize::try_from(table.sh_size).map_err(|_| malformed("size"))?;
    let tab = read_at(table.sh_offset, len).map_err(|_| malformed("section outside the file"))?;
    // Function entries are offsets from runtime.text, which the table's
    // header records; where that word is left to a relocation (0 in the
    // file), the `.text` section's start (no C code before Go's there).
    let text = section(b".text")
        .map(|s| s.sh_addr)
        .ok_or_else(|| malformed("no .text section"))?;
    let found = lookup(&tab, text, names).map_err(|e| match e {
        TableError::OldGo(magic) => GoSymError::OldGo {
            path: shown.clone(),
            magic,
        },
        TableError::Malformed(why) => malformed(why),
    })?;
    Ok(Some(GoFunctions {
        entry: header.e_entry,
        pie: header.e_type == header::ET_DYN,
        found,
    }))
}

/// What is wrong with a table's bytes.
#[derive(Debug, PartialEq, Eq)]
enum TableError {
    OldGo(u32),
    Malformed(&'static str),
}

/// The (name, address) of each of `names` in the pclntab `tab`, whose
/// function offsets count from the header's textStart, or from `text`
/// where that is 0.
fn lookup(tab: &[u8], text: u64, names: &[&str]) -> Result<Vec<(String, u64)>, TableError> {
    let bytes = |at: usize, n: usize| {
        tab.get(at..at.saturating_add(n))
            .ok_or(TableError::Malformed("cut short"))
    };
    let u32_at = |at: usize| bytes(at, 4).map(|b| u32::from_le_bytes(b.try_into().expect("4")));
    let magic = u32_at(0)?;
    if !MAGICS.contains(&magic) {
        return Err(TableError::OldGo(magic));
    }
    if bytes(7, 1)?[0] != 8 {
        return Err(TableError::Malformed("not a 64-bit table"));
    }
    // The header's words after the 8 fixed bytes: nfunc, nfiles, textStart,
    // funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset.
    let word = |i: usize| -> Result<usize, TableError> {
        let b = bytes(8 + 8 * i, 8)?;
        usize::try_from(u64::from_le_bytes(b.try_into().expect("8")))
            .map_err(|_| TableError::Malformed("offset"))
    };
    let (nfunc, names_at, functab_at) = (word(0)?, word(3)?, word(7)?);
    let text = match word(2)? {
        0 => text,
        start => start as u64,
    };
    let mut found = Vec::new();
    for i in 0..nfunc {
        let entry_off = u32_at(functab_at + 8 * i)?;
        let func_off = u32_at(functab_at + 8 * i + 4)? as usize;
        // A _func starts with its entry offset, then its name's offset.
        let name_off = u32_at(functab_at + func_off + 4)? as usize;
        let name_at = names_at + name_off;
        let rest = tab
            .get(name_at..)
            .ok_or(TableError::Malformed("name outside"))?;
        let name = &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())];
        if let Some(&wanted) = names.iter().find(|n| n.as_bytes() == name) {
            found.push((wanted.to_string(), text + u64::from(entry_off)));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::{lookup, TableError};

    /// A table of two functions, laid out as Go 1.18's linker does.
    fn table() -> Vec<u8> {
        let mut t = vec![0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8];
        let names = b"main.main\0runtime.gosched_m\0";
        let header_end = 8 + 8 * 8;
        let names_at = header_end;
        let functab_at = names_at + names.len();
        // functab: 2 entries + the end entry, then the two _func records.
        let funcs_at = 3 * 8;
        for w in [2, 0, 0, names_at, 0, 0, 0, functab_at] {
            t.extend_from_slice(&(w as u64).to_le_bytes());
        }
        t.extend_from_slice(names);
        for (entry, func) in [(0x10u32, funcs_at), (0x80, funcs_at + 8), (0x100, 0)] {
            t.extend_from_slice(&entry.to_le_bytes());
            t.extend_from_slice(&(func as u32).to_le_bytes());
        }
        for (entry, name) in [(0x10u32, 0u32), (0x80, 10)] {
            t.extend_from_slice(&entry.to_le_bytes());
            t.extend_from_slice(&name.to_le_bytes());
        }
        t
    }

    #[test]
    fn finds_a_function_by_name_at_text_plus_its_offset() {
        let found = lookup(&table(), 0x401000, &["runtime.gosched_m", "runtime.absent"]).unwrap();
        assert_eq!(found, [("runtime.gosched_m".to_string(), 0x401080)]);
    }

    /// A cgo program's `.text` starts with C code: the header's textStart
    /// (runtime.text) is what the offsets count from.
    #[test]
    fn the_headers_text_start_wins_over_the_section() {
        let mut t = table();
        t[8 + 16..8 + 24].copy_from_slice(&0x402100u64.to_le_bytes());
        let found = lookup(&t, 0x402000, &["runtime.gosched_m"]).unwrap();
        assert_eq!(found, [("runtime.gosched_m".to_string(), 0x402180)]);
    }

    #[test]
    fn an_old_table_and_a_cut_table_are_errors() {
        let mut old = table();
        old[0] = 0xfa;
        assert_eq!(lookup(&old, 0, &[]), Err(TableError::OldGo(0xffff_fffa)));
        let cut = &table()[..40];
        assert_eq!(lookup(cut, 0, &[]), Err(TableError::Malformed("cut short")));
    }

    /// Debian's etcd, when installed: a stripped Go executable.
    #[test]
    fn finds_the_runtime_yield_in_a_stripped_go_binary() {
        let etcd = std::path::Path::new("/usr/bin/etcd");
        if !etcd.exists() {
            return;
        }
        let go = super::find_functions(etcd, &["runtime.gosched_m"])
            .unwrap()
            .expect("etcd is a Go program");
        assert_eq!(go.found.len(), 1, "{go:?}");
        assert!(super::find_functions(std::path::Path::new("/bin/sh"), &[])
            .unwrap()
            .is_none());
    }
}
