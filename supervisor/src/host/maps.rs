//! A process's memory mappings as /proc/PID/maps lists them, read where
//! faultline must know where something lies: the dynamic loader (auxv),
//! libc's code (its call sites are patched), the kernel's vDSO (its size
//! bounds faultline's own).

/// One mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub lo: u64,
    /// The address after the last.
    pub hi: u64,
    /// "r-xp" and the like.
    pub perms: String,
    /// The file or the kernel's name for it ("[vdso]"); empty when
    /// anonymous.
    pub path: String,
}

/// The mappings of process `pid`, or None if they cannot be read.
pub fn of(pid: i32) -> Option<Vec<Mapping>> {
    read(&format!("/proc/{pid}/maps"))
}

/// faultline's own mappings, or None if they cannot be read.
pub fn own() -> Option<Vec<Mapping>> {
    read("/proc/self/maps")
}

fn read(path: &str) -> Option<Vec<Mapping>> {
    std::fs::read_to_string(path).ok().map(|text| parse(&text))
}

/// The lines "lo-hi perms offset dev inode path" of a maps file; a line
/// that is not one is skipped.
fn parse(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (lo, hi) = f.next()?.split_once('-')?;
            let perms = f.next()?.to_string();
            let path = f.nth(3).unwrap_or_default().to_string();
            Some(Mapping {
                lo: u64::from_str_radix(lo, 16).ok()?,
                hi: u64::from_str_radix(hi, 16).ok()?,
                perms,
                path,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ranges_permissions_and_paths_and_leaves_anonymous_ones_unnamed() {
        let text = "7ffff7dd4000-7ffff7f29000 r-xp 00028000 fe:01 1234 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                    7ffff7f40000-7ffff7f42000 rw-p 00000000 00:00 0 \n\
                    7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0                          [vdso]\n\
                    not a mapping\n";
        let maps = parse(text);
        assert_eq!(maps.len(), 3);
        assert_eq!(
            (maps[0].lo, maps[0].hi),
            (0x7fff_f7dd_4000, 0x7fff_f7f2_9000)
        );
        assert_eq!(maps[0].perms, "r-xp");
        assert!(maps[0].path.ends_with("/libc.so.6"));
        assert_eq!(maps[1].path, "");
        assert_eq!(maps[2].path, "[vdso]");
        assert!(own().is_some_and(|m| m.iter().any(|m| m.perms.contains('x'))));
    }
}
