//! getdents and getdents64. The kernel lists the directory; at the exit
//! each entry's inode number (`d_ino`, the host's, new on every run for
//! files the run creates) is replaced by the one `stat` shows for that
//! file: on a node's disk vfs's inode, elsewhere the number first-seen
//! order gives. The order of the entries and their `d_off` cookies stay
//! the host file system's: the same names in the same directory list the
//! same way on one file system.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::{Action, Call};
use crate::sim::fileids::Listing;
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::world::{ExitHook, Resume};

/// One entry of a listing: where its `d_ino` is, its host inode, its name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    at: usize,
    ino: u64,
    name: Vec<u8>,
}

/// The entries of `bytes` as the kernel wrote them. Both layouts start
/// with `d_ino` (8 bytes), `d_off` (8) and `d_reclen` (2); the name
/// follows at 19 (after `d_type`) in the wide one, at 18 in the old one.
fn entries(bytes: &[u8], wide: bool) -> Vec<Entry> {
    let name_at = if wide { 19 } else { 18 };
    let mut out = Vec::new();
    let mut at = 0;
    while at + name_at <= bytes.len() {
        let reclen = u16::from_ne_bytes([bytes[at + 16], bytes[at + 17]]) as usize;
        if reclen < name_at || at + reclen > bytes.len() {
            break;
        }
        let ino = u64::from_ne_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let raw = &bytes[at + name_at..at + reclen];
        let name = raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())].to_vec();
        out.push(Entry { at, ino, name });
        at += reclen;
    }
    out
}

impl Sim {
    /// getdents/getdents64 at the entry: what the exit needs.
    pub(super) fn sys_getdents(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let fd = c.a[0] as i32;
        targs.push(fd as i64);
        let host_dev = std::fs::metadata(format!("/proc/{}/fd/{fd}", c.pid)).map_or(0, |m| m.dev());
        let disk = self
            .disk_ino_of_fd(c.pid, fd)
            .and_then(|(d, ino)| Some((d, self.disks.get(d).disk.path_of(ino)?)));
        Action::Now(Resume::PassThenExit(
            None,
            ExitHook::Dirents(Box::new(Listing {
                buf: c.a[1],
                wide: c.nr == libc::SYS_getdents64,
                host_dev,
                disk,
            })),
        ))
    }

    /// At the exit of a listing that returned `len` bytes: the simulated
    /// inode numbers over the host's.
    pub(crate) fn dirents_listed(&mut self, mem: &impl Memory, len: usize, listing: &Listing) {
        let mut bytes = vec![0u8; len];
        if mem.read_mem(listing.buf, &mut bytes).is_err() {
            return;
        }
        for entry in entries(&bytes, listing.wide) {
            let on_disk = listing.disk.as_ref().and_then(|(d, dir)| {
                let path = match entry.name.as_slice() {
                    b"." => dir.clone(),
                    b".." => dir.parent().map_or_else(|| dir.clone(), PathBuf::from),
                    name => dir.join(OsStr::from_bytes(name)),
                };
                Some((*d, self.disks.get(*d).disk.lookup(&path).ok()?))
            });
            let id = self.identity(on_disk, listing.host_dev, entry.ino);
            bytes[entry.at..entry.at + 8].copy_from_slice(&id.ino.to_ne_bytes());
        }
        let _ = mem.write_mem(listing.buf, &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `linux_dirent64` record: ino, off, reclen, type, name, padding.
    fn record(ino: u64, name: &str) -> Vec<u8> {
        let reclen = (19 + name.len() + 1).next_multiple_of(8);
        let mut r = Vec::new();
        r.extend_from_slice(&ino.to_ne_bytes());
        r.extend_from_slice(&7i64.to_ne_bytes());
        r.extend_from_slice(&(reclen as u16).to_ne_bytes());
        r.push(libc::DT_REG);
        r.extend_from_slice(name.as_bytes());
        r.resize(reclen, 0);
        r
    }

    #[test]
    fn a_listing_is_split_into_its_entries() {
        let mut bytes = record(11, ".");
        bytes.extend(record(2, ".."));
        bytes.extend(record(4242, "segment-000001.wal"));
        let got = entries(&bytes, true);
        let names: Vec<&[u8]> = got.iter().map(|e| e.name.as_slice()).collect();
        assert_eq!(names, [&b"."[..], b"..", b"segment-000001.wal"]);
        assert_eq!(got[2].ino, 4242);
        assert_eq!(got[1].at, 24);
    }

    #[test]
    fn a_truncated_record_ends_the_listing() {
        let mut bytes = record(11, "a");
        bytes.extend(&record(12, "b")[..10]);
        assert_eq!(entries(&bytes, true).len(), 1);
    }
}
