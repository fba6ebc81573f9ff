//! statfs and fstatfs. Programs size their storage from the free space of
//! their data directory, and the host's free space changes all the time: a
//! node's data_dir reports its simulated disk (`[disk] size`, minus what the
//! node's files hold now, as vfs knows them; none free during a `disk_full`
//! fault), and every other file system
//! reports fixed figures (its type and flags stay the host's, so a program
//! that checks for tmpfs or procfs still sees it).

use super::{Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::world::{ExitHook, Resume};

/// Block size every file system reports.
const BLOCK: u64 = 4096;
/// Size of a file system that is not a simulated disk.
const OTHER_SIZE: u64 = 100 << 30;
/// Its free space.
const OTHER_FREE: u64 = 50 << 30;
/// Inodes of every file system.
const INODES: u64 = 1 << 20;
/// The type a simulated disk reports (ext4's magic).
const EXT4_SUPER_MAGIC: i64 = 0xEF53;
/// `ST_VALID`: the flags field is filled in.
const ST_VALID: i64 = 0x20;

/// `struct statfs` of x86-64: f_type, f_bsize, f_blocks, f_bfree, f_bavail,
/// f_files, f_ffree, f_fsid (two ints), f_namelen, f_frsize, f_flags,
/// f_spare[4] — fifteen 8-byte words.
type StatfsBuf = [i64; 15];

impl Sim {
    /// statfs(path, buf) and fstatfs(fd, buf): the kernel runs the call (and
    /// reports a missing path or a bad descriptor); its answer is replaced
    /// at the exit.
    pub(super) fn sys_statfs(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let disk = if c.nr == libc::SYS_statfs {
            self.disk_of_path(c, libc::AT_FDCWD, c.a[0])
        } else {
            self.disk_of_fd(c.pid, c.a[0] as i32)
        };
        targs.push(disk.map_or(-1, |d| d as i64));
        Action::Now(Resume::PassThenExit(
            None,
            ExitHook::Statfs { buf: c.a[1], disk },
        ))
    }

    /// At the exit of a successful statfs/fstatfs: writes the simulated
    /// figures over the kernel's.
    pub(crate) fn statfs_exit(&mut self, mem: &impl Memory, buf: u64, disk: Option<usize>) {
        let Ok(mut st) = mem.read_val::<StatfsBuf>(buf) else {
            return;
        };
        let (size, used, inodes_used, fsid) = match disk {
            Some(d) => {
                let nd = self.disks.get(d);
                let usage = nd.disk.usage();
                // A `disk_full` fault: the disk has no room left, as its
                // writes' ENOSPC says.
                let used = if nd.disk.config().full {
                    nd.size
                } else {
                    usage.bytes
                };
                (nd.size, used, usage.inodes, d as i64 + 1)
            }
            // A pseudo file system (procfs, sysfs, ...) has no blocks.
            None if st[2] == 0 => (0, 0, 0, 0),
            None => (OTHER_SIZE, OTHER_SIZE - OTHER_FREE, 0, 0),
        };
        let blocks = size / BLOCK;
        let free = size.saturating_sub(used) / BLOCK;
        if disk.is_some() {
            st[0] = EXT4_SUPER_MAGIC;
            st[8] = 255;
            st[10] = ST_VALID;
        }
        st[1] = BLOCK as i64;
        st[2] = blocks as i64;
        st[3] = free as i64;
        st[4] = free as i64;
        let files = if size == 0 { 0 } else { INODES };
        st[5] = files as i64;
        st[6] = files.saturating_sub(inodes_used) as i64;
        st[7] = fsid;
        st[9] = BLOCK as i64;
        let _ = mem.write_val(buf, &st);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{add_disk, call, world, zeroed, DISK_AT};
    use super::super::Action;
    use super::{StatfsBuf, BLOCK, EXT4_SUPER_MAGIC, OTHER_FREE, OTHER_SIZE};
    use crate::sim::memory::Memory;
    use crate::sim::world::{ExitHook, Resume};

    const BUF: u64 = 0x2000;

    /// What statfs_exit makes of the kernel's answer `host`.
    fn patched(
        sim: &mut crate::sim::state::Sim,
        host: StatfsBuf,
        disk: Option<usize>,
    ) -> StatfsBuf {
        let mem = zeroed(BUF, 120);
        mem.write_val(BUF, &host).unwrap();
        sim.statfs_exit(&mem, BUF, disk);
        mem.read_val(BUF).unwrap()
    }

    #[test]
    fn a_data_dir_reports_its_simulated_disk() {
        let mut sim = world();
        let _root = add_disk(&mut sim, 1 << 20);
        let mem = zeroed(0x1000, 0x1000);
        mem.write_mem(0x1000, format!("{DISK_AT}/x").as_bytes())
            .unwrap();
        let c = call(libc::SYS_statfs, [0x1000, BUF, 0, 0, 0, 0], mem);
        let action = sim.sys_statfs(&c, &mut vec![]);
        let Action::Now(Resume::PassThenExit(_, ExitHook::Statfs { buf, disk })) = action else {
            panic!("not passed with a statfs exit");
        };
        assert_eq!((buf, disk), (BUF, Some(0)));
        let st = patched(&mut sim, [1; 15], Some(0));
        assert_eq!(
            (st[0], st[1], st[2], st[3]),
            (EXT4_SUPER_MAGIC, 4096, 256, 256)
        );
        sim.disks.get_mut(0).disk.config_mut().full = true;
        assert_eq!(
            patched(&mut sim, [1; 15], Some(0))[4],
            0,
            "disk_full: none free"
        );
    }

    #[test]
    fn other_file_systems_report_fixed_figures_and_keep_their_type() {
        let mut sim = world();
        let st = patched(&mut sim, [7; 15], None);
        let blocks = (OTHER_SIZE / BLOCK) as i64;
        assert_eq!(
            (st[0], st[2], st[3]),
            (7, blocks, (OTHER_FREE / BLOCK) as i64)
        );
        let mut pseudo = [7; 15];
        pseudo[2] = 0;
        let st = patched(&mut sim, pseudo, None);
        assert_eq!(
            (st[0], st[2], st[3], st[5]),
            (7, 0, 0, 0),
            "procfs has no blocks"
        );
    }
}
