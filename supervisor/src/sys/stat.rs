//! stat, fstat, lstat, newfstatat and statx. The kernel runs the call; at
//! its exit the device and inode numbers and the three times are replaced by
//! the file's simulated identity (`sim::fileids`): on a node's disk, vfs's
//! inode and the virtual time of the last change; elsewhere, numbers in the
//! order first seen and a fixed time.

use super::{Action, Call};
use crate::sim::fileids::{DiskFile, Identity, StatLayout};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::vclock::NS;
use crate::sim::world::{ExitHook, Resume};

/// `struct stat` of x86-64 as 8-byte words: st_dev 0, st_ino 1, st_blocks
/// 8, st_atim 9-10, st_mtim 11-12, st_ctim 13-14.
type StatBuf = [u64; 18];

/// `struct statx` as 8-byte words: stx_ino 4, stx_atime 8-9, stx_btime
/// 10-11, stx_ctime 12-13, stx_mtime 14-15, stx_dev_major/minor in 17.
type StatxBuf = [u64; 32];

impl Sim {
    /// The stat family at the entry: find the file's disk, if any.
    pub(super) fn sys_stat(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let empty_path = |flags: u64, addr: u64| {
            flags & libc::AT_EMPTY_PATH as u64 != 0
                && c.mem().read_cstr(addr, 1).is_ok_and(|p| p.is_empty())
        };
        let (fd, path, buf, layout) = match c.nr {
            libc::SYS_fstat => (Some(c.a[0] as i32), None, c.a[1], StatLayout::Stat),
            libc::SYS_stat | libc::SYS_lstat => (
                None,
                Some((libc::AT_FDCWD, c.a[0])),
                c.a[1],
                StatLayout::Stat,
            ),
            libc::SYS_newfstatat if empty_path(c.a[3], c.a[1]) => {
                (Some(c.a[0] as i32), None, c.a[2], StatLayout::Stat)
            }
            libc::SYS_newfstatat => (
                None,
                Some((c.a[0] as i32, c.a[1])),
                c.a[2],
                StatLayout::Stat,
            ),
            _ if empty_path(c.a[2], c.a[1]) => {
                (Some(c.a[0] as i32), None, c.a[4], StatLayout::Statx)
            }
            _ => (
                None,
                Some((c.a[0] as i32, c.a[1])),
                c.a[4],
                StatLayout::Statx,
            ),
        };
        let disk = match (fd, path) {
            (Some(fd), _) => self
                .disk_ino_of_fd(c.pid, fd)
                .map(|(d, ino)| DiskFile::Ino(d, ino)),
            (None, Some((dirfd, addr))) => self
                .disk_rel_path(c, dirfd, addr)
                .map(|(d, rel)| DiskFile::Path(d, rel)),
            (None, None) => None,
        };
        targs.push(match &disk {
            Some(DiskFile::Ino(d, _) | DiskFile::Path(d, _)) => *d as i64,
            None => -1,
        });
        Action::Now(Resume::PassThenExit(
            None,
            ExitHook::Stat { buf, layout, disk },
        ))
    }

    /// At the exit of a successful stat call: the simulated identity over
    /// the host's.
    pub(crate) fn stat_exit(
        &mut self,
        mem: &impl Memory,
        buf: u64,
        layout: StatLayout,
        disk: Option<DiskFile>,
    ) {
        let on_disk = match disk {
            Some(DiskFile::Ino(d, ino)) => Some((d, ino)),
            Some(DiskFile::Path(d, rel)) => {
                self.disks.get(d).disk.lookup(&rel).ok().map(|i| (d, i))
            }
            None => None,
        };
        match layout {
            StatLayout::Stat => {
                let Ok(mut st) = mem.read_val::<StatBuf>(buf) else {
                    return;
                };
                let id = self.identity(on_disk, st[0], st[1]);
                st[0] = libc::makedev(id.dev.0, id.dev.1);
                st[1] = id.ino;
                let (sec, nsec) = split(id.time_ns);
                for at in [9, 11, 13] {
                    st[at] = sec;
                    st[at + 1] = nsec;
                }
                let _ = mem.write_val(buf, &st);
            }
            StatLayout::Statx => {
                let Ok(mut st) = mem.read_val::<StatxBuf>(buf) else {
                    return;
                };
                let host_dev = libc::makedev(st[17] as u32, (st[17] >> 32) as u32);
                let id = self.identity(on_disk, host_dev, st[4]);
                st[4] = id.ino;
                let (sec, nsec) = split(id.time_ns);
                for at in [8, 10, 12, 14] {
                    st[at] = sec;
                    st[at + 1] = nsec;
                }
                st[17] = u64::from(id.dev.0) | u64::from(id.dev.1) << 32;
                let _ = mem.write_val(buf, &st);
            }
        }
    }

    /// The identity to show for a file.
    pub(super) fn identity(
        &mut self,
        on_disk: Option<(usize, vfs::Ino)>,
        host_dev: u64,
        host_ino: u64,
    ) -> Identity {
        match on_disk {
            Some((d, ino)) => self.file_ids.on_disk(d, ino),
            None => self.file_ids.elsewhere(host_dev, host_ino),
        }
    }
}

/// A time as (seconds, nanoseconds) words of a timespec.
fn split(ns: i128) -> (u64, u64) {
    let sec = ns.div_euclid(NS as i128);
    (sec as i64 as u64, ns.rem_euclid(NS as i128) as u64)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{add_disk, call, world, zeroed, DISK_AT, PID};
    use super::super::Action;
    use super::{StatBuf, StatxBuf};
    use crate::sim::fdkind::FdKind;
    use crate::sim::fileids::{DiskFile, StatLayout};
    use crate::sim::memory::{FakeMemory, Memory};
    use crate::sim::state::Sim;
    use crate::sim::world::{ExitHook, Resume};

    const PATH: u64 = 0x1000;
    const BUF: u64 = 0x2000;

    /// Memory holding `path` at PATH and room for a statx at BUF.
    fn memory(path: &str) -> FakeMemory {
        let mem = zeroed(PATH, 0x1000);
        mem.map(BUF, &[0; 256]);
        mem.write_mem(PATH, path.as_bytes()).unwrap();
        mem
    }

    /// The disk file a stat call's exit will look at.
    fn disk_of(sim: &mut Sim, nr: i64, a: [u64; 6], path: &str) -> Option<DiskFile> {
        let mut targs = vec![];
        let action = sim.sys_stat(&call(nr, a, memory(path)), &mut targs);
        let Action::Now(Resume::PassThenExit(None, ExitHook::Stat { disk, .. })) = action else {
            panic!("not passed with a stat exit");
        };
        assert_eq!(targs, [disk.as_ref().map_or(-1, |_| 0)]);
        disk
    }

    #[test]
    fn a_stat_on_the_nodes_disk_is_found_by_path_or_descriptor() {
        let mut sim = world();
        let _root = add_disk(&mut sim, 1 << 20);
        let file = format!("{DISK_AT}/dir/../f");
        let disk = disk_of(&mut sim, libc::SYS_stat, [PATH, BUF, 0, 0, 0, 0], &file);
        assert!(matches!(disk, Some(DiskFile::Path(0, p)) if p == std::path::Path::new("f")));
        let at = [libc::AT_FDCWD as u64, PATH, BUF, 0, 0, 0];
        assert!(disk_of(&mut sim, libc::SYS_newfstatat, at, "/etc/hosts").is_none());
        let ino = sim.disks.get_mut(0).disk.on_create("f").unwrap();
        let kind = FdKind::Disk {
            disk: 0,
            ino,
            append: false,
        };
        sim.fd_opened(PID, 3, kind, false);
        let disk = disk_of(&mut sim, libc::SYS_fstat, [3, BUF, 0, 0, 0, 0], "");
        assert!(matches!(disk, Some(DiskFile::Ino(0, i)) if i == ino));
        // statx with AT_EMPTY_PATH is about the descriptor.
        let empty = [3, PATH, libc::AT_EMPTY_PATH as u64, 0, BUF, 0];
        let disk = disk_of(&mut sim, libc::SYS_statx, empty, "");
        assert!(matches!(disk, Some(DiskFile::Ino(0, i)) if i == ino));
    }

    #[test]
    fn the_exit_shows_simulated_numbers_and_times() {
        let mut sim = world();
        let mem = memory("");
        let mut host = [0u64; 18];
        (host[0], host[1], host[9], host[11]) = (libc::makedev(8, 1), 777, 5, 6);
        mem.write_val(BUF, &host).unwrap();
        sim.stat_exit(&mem, BUF, StatLayout::Stat, None);
        let st: StatBuf = mem.read_val(BUF).unwrap();
        assert_eq!((st[0], st[1]), (libc::makedev(0xfc, 1), 1 << 20));
        assert_eq!([st[9], st[11], st[13]], [st[9]; 3], "one fixed time");
        assert_ne!(st[9], 5);
        // Another host file gets the next number; the same file its own.
        host[1] = 778;
        mem.write_val(BUF, &host).unwrap();
        sim.stat_exit(&mem, BUF, StatLayout::Stat, None);
        assert_eq!(mem.read_val::<StatBuf>(BUF).unwrap()[1], (1 << 20) + 1);
        let mut statx = [0u64; 32];
        (statx[4], statx[17]) = (777, 8 | 1 << 32);
        mem.write_val(BUF, &statx).unwrap();
        sim.stat_exit(&mem, BUF, StatLayout::Statx, None);
        let stx: StatxBuf = mem.read_val(BUF).unwrap();
        assert_eq!((stx[4], stx[17]), (1 << 20, 0xfc | 1 << 32));
    }

    #[test]
    fn a_disk_file_shows_its_vfs_inode_and_last_change() {
        let mut sim = world();
        let _root = add_disk(&mut sim, 1 << 20);
        let ino = sim.disks.get_mut(0).disk.on_create("f").unwrap();
        sim.file_ids.touch(0, ino, 42_000_000_123);
        let mem = memory("");
        let path = DiskFile::Path(0, "f".into());
        sim.stat_exit(&mem, BUF, StatLayout::Stat, Some(path));
        let st: StatBuf = mem.read_val(BUF).unwrap();
        assert_eq!(st[1], 2 + ino.number());
        assert_eq!([st[11], st[12]], [42, 123]);
    }
}
