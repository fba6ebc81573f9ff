//! File calls on a node's simulated disk. The kernel does the work on the
//! disk's tmpfs; faultline tells vfs what changed (after the call succeeded)
//! so a crash can take back what was never made durable. fsync and
//! fdatasync are answered by vfs alone: it decides durability and faults.

use std::path::PathBuf;

use super::{err, pass, ret, table, Action, Call};
use crate::sim::diskstate::{normalize, FailedDiskCall};
use crate::sim::fdkind::FdKind;
use crate::sim::host_probe::HostProbe;
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::world::{DiskOp, ExitHook, Resume};

/// Where a path argument of a call lives.
struct PathArg {
    dirfd: i32,
    addr: u64,
}

impl Sim {
    /// The disk and the disk-relative path a (dirfd, path) pair names, if it
    /// is on the caller's node's disk.
    fn disk_path(&self, c: &Call<impl Memory>, p: &PathArg) -> Option<(usize, PathBuf)> {
        let proc_ = self.procs.get(&c.pid)?;
        let disk = self.disks.of_host(proc_.host)?;
        let raw = c.mem().read_cstr(p.addr, 4096).ok()?;
        let path = PathBuf::from(String::from_utf8_lossy(&raw).into_owned());
        let abs = if path.is_absolute() {
            path
        } else if p.dirfd == libc::AT_FDCWD {
            std::fs::read_link(format!("/proc/{}/cwd", c.pid))
                .ok()?
                .join(path)
        } else {
            match proc_.fds.get(&p.dirfd) {
                Some(FdKind::Disk { disk: d, ino, .. }) if *d == disk => {
                    let d = self.disks.get(disk);
                    d.visible.join(d.disk.path_of(*ino)?).join(path)
                }
                _ => std::fs::read_link(format!("/proc/{}/fd/{}", c.pid, p.dirfd))
                    .ok()?
                    .join(path),
            }
        };
        let rel = normalize(&abs)
            .strip_prefix(&self.disks.get(disk).visible)
            .ok()?
            .to_path_buf();
        Some((disk, rel))
    }

    /// Names the paths of the call being handled in its trace event, as
    /// the program sees them.
    fn note_disk_paths(&mut self, disk: usize, rels: &[&PathBuf]) {
        let visible = &self.disks.get(disk).visible;
        let paths = rels
            .iter()
            .map(|rel| visible.join(rel).display().to_string())
            .collect();
        self.trace.note_paths(paths);
    }

    /// The disk a (dirfd, path) argument is on, if it is on the caller's.
    pub(super) fn disk_of_path(
        &self,
        c: &Call<impl Memory>,
        dirfd: i32,
        addr: u64,
    ) -> Option<usize> {
        self.disk_path(c, &PathArg { dirfd, addr }).map(|(d, _)| d)
    }

    /// The disk and disk-relative path of a (dirfd, path) argument, if it
    /// is on the caller's disk.
    pub(super) fn disk_rel_path(
        &self,
        c: &Call<impl Memory>,
        dirfd: i32,
        addr: u64,
    ) -> Option<(usize, PathBuf)> {
        self.disk_path(c, &PathArg { dirfd, addr })
    }

    /// The disk and vfs inode of descriptor `fd` of `pid`, if on a disk.
    pub(super) fn disk_ino_of_fd(&self, pid: i32, fd: i32) -> Option<(usize, vfs::Ino)> {
        self.disk_fd(pid, fd).map(|(d, ino, _)| (d, ino))
    }

    /// The disk descriptor `fd` of `pid` is open on, if any.
    pub(super) fn disk_of_fd(&self, pid: i32, fd: i32) -> Option<usize> {
        self.disk_fd(pid, fd).map(|(d, _, _)| d)
    }

    /// The disk file behind descriptor `fd`, if any.
    pub(super) fn disk_fd(&self, pid: i32, fd: i32) -> Option<(usize, vfs::Ino, bool)> {
        match self.procs.get(&pid)?.fds.get(&fd)? {
            FdKind::Disk { disk, ino, append } => Some((*disk, *ino, *append)),
            _ => None,
        }
    }

    /// Records a disk call's effect once the kernel has returned `ret`.
    pub(crate) fn disk_exit(&mut self, pid: i32, hook: ExitHook, ret: i64) {
        if ret < 0 {
            return;
        }
        let now = self
            .clock
            .read_on(self.clock_host(pid), libc::CLOCK_REALTIME);
        match hook {
            ExitHook::DiskOpen { disk, rel, flags } => {
                let d = &mut self.disks.get_mut(disk).disk;
                let ino = if flags & libc::O_CREAT != 0 {
                    d.on_create(&rel)
                } else {
                    d.lookup(&rel)
                };
                let Ok(ino) = ino else {
                    return;
                };
                if flags & libc::O_TRUNC != 0 && flags & libc::O_ACCMODE != libc::O_RDONLY {
                    let _ = d.on_truncate(ino, 0);
                    self.file_ids.touch(disk, ino, now);
                }
                if flags & libc::O_CREAT != 0 {
                    self.touch_entry(disk, &rel, now);
                }
                let append = flags & libc::O_APPEND != 0;
                if let Some(p) = self.procs.get_mut(&pid) {
                    p.fds.insert(ret as i32, FdKind::Disk { disk, ino, append });
                }
            }
            ExitHook::DiskWrite {
                disk,
                ino,
                offset,
                data,
            } => {
                let n = (ret as usize).min(data.len());
                let _ = self
                    .disks
                    .get_mut(disk)
                    .disk
                    .on_write(ino, offset, &data[..n]);
                self.file_ids.touch(disk, ino, now);
            }
            ExitHook::DiskChange { disk, op, .. } => {
                let touched = match &op {
                    DiskOp::Rename(a, b) | DiskOp::Link(a, b) => vec![a.clone(), b.clone()],
                    DiskOp::Unlink(p) | DiskOp::Rmdir(p) | DiskOp::Mkdir(p) | DiskOp::Create(p) => {
                        vec![p.clone()]
                    }
                    DiskOp::Truncate(..) | DiskOp::Fallocate(..) => Vec::new(),
                };
                if let DiskOp::Truncate(ino, _) | DiskOp::Fallocate(ino, ..) = &op {
                    self.file_ids.touch(disk, *ino, now);
                }
                let d = &mut self.disks.get_mut(disk).disk;
                let _ = match op {
                    DiskOp::Rename(a, b) => d.on_rename(a, b),
                    DiskOp::Unlink(p) => d.on_unlink(p),
                    DiskOp::Rmdir(p) => d.on_rmdir(p),
                    DiskOp::Mkdir(p) => d.on_mkdir(p).map(drop),
                    DiskOp::Create(p) => d.on_create(p).map(drop),
                    DiskOp::Link(a, b) => d.on_link(a, b),
                    DiskOp::Truncate(ino, len) => d.on_truncate(ino, len),
                    DiskOp::Fallocate(ino, off, len) => d.on_fallocate(ino, off, len),
                };
                for path in touched {
                    self.touch_entry(disk, &path, now);
                }
            }
            _ => {}
        }
    }

    /// A directory entry at `rel` changed at `now`: the file it names (if
    /// any is left) and its directory both show that change time.
    fn touch_entry(&mut self, disk: usize, rel: &std::path::Path, now: i128) {
        let d = &self.disks.get(disk).disk;
        let parent = rel.parent().unwrap_or(std::path::Path::new(""));
        let inos: Vec<vfs::Ino> = [rel, parent]
            .iter()
            .filter_map(|p| d.lookup(p).ok())
            .collect();
        for ino in inos {
            self.file_ids.touch(disk, ino, now);
        }
    }
}

impl Sim {
    /// Calls that may touch a disk; `None` if this one does not.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_disk(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Option<Action> {
        use libc::*;
        let path = |dirfd: i32, addr: u64| PathArg { dirfd, addr };
        let change = |disk: usize, op: DiskOp| {
            Action::Now(Resume::PassThenExit(
                None,
                ExitHook::DiskChange {
                    disk,
                    op,
                    restore: None,
                },
            ))
        };
        match c.nr {
            SYS_open | SYS_openat | SYS_openat2 | SYS_creat => {
                let (p, flags) = match c.nr {
                    SYS_open => (path(AT_FDCWD, c.a[0]), c.a[1] as i32),
                    SYS_creat => (path(AT_FDCWD, c.a[0]), O_CREAT | O_WRONLY | O_TRUNC),
                    // struct open_how starts with the u64 flags.
                    SYS_openat2 => (
                        path(c.a[0] as i32, c.a[1]),
                        c.mem().read_val::<u64>(c.a[2]).ok()? as i32,
                    ),
                    _ => (path(c.a[0] as i32, c.a[1]), c.a[2] as i32),
                };
                let (disk, rel) = self.disk_path(c, &p)?;
                self.note_disk_paths(disk, &[&rel]);
                Some(Action::Now(Resume::PassThenExit(
                    None,
                    ExitHook::DiskOpen { disk, rel, flags },
                )))
            }
            SYS_write | SYS_writev | SYS_pwrite64 | SYS_pwritev | SYS_pwritev2 => {
                let (disk, ino, append) = self.disk_fd(c.pid, c.a[0] as i32)?;
                Some(self.disk_write(c, host, disk, ino, append, targs))
            }
            SYS_fsync | SYS_fdatasync => {
                let (disk, ino, _) = self.disk_fd(c.pid, c.a[0] as i32)?;
                let outcome = self.disks.get_mut(disk).disk.on_fsync(ino);
                targs.push(c.a[0] as i64);
                Some(match outcome {
                    Ok(Some(e)) => {
                        self.disk_error(disk, ino, table::name(c.nr), e);
                        err(e.0)
                    }
                    Ok(None) => ret(0),
                    Err(e) => {
                        // The durability model could not record the sync: the
                        // program must not believe its data is durable.
                        let path = self.disks.get(disk).disk.path_of(ino);
                        self.report_once(crate::sim::diagnostics::DiagKind::InternalError, format!(
                            "internal error: fsync of {} on a simulated disk failed in faultline: {e}; answered EIO",
                            path.map_or_else(|| format!("inode {ino:?}"), |p| p.display().to_string())
                        ));
                        err(libc::EIO)
                    }
                })
            }
            SYS_ftruncate => {
                let (disk, ino, _) = self.disk_fd(c.pid, c.a[0] as i32)?;
                Some(change(disk, DiskOp::Truncate(ino, c.a[1])))
            }
            SYS_fallocate if c.a[1] == 0 => {
                let (disk, ino, _) = self.disk_fd(c.pid, c.a[0] as i32)?;
                Some(self.sparse_fallocate(c, host, disk, ino))
            }
            SYS_truncate => {
                let (disk, rel) = self.disk_path(c, &path(AT_FDCWD, c.a[0]))?;
                let ino = self.disks.get(disk).disk.lookup(&rel).ok()?;
                self.note_disk_paths(disk, &[&rel]);
                Some(change(disk, DiskOp::Truncate(ino, c.a[1])))
            }
            SYS_rename | SYS_renameat | SYS_renameat2 => {
                let (from, to) = if c.nr == SYS_rename {
                    (path(AT_FDCWD, c.a[0]), path(AT_FDCWD, c.a[1]))
                } else {
                    (path(c.a[0] as i32, c.a[1]), path(c.a[2] as i32, c.a[3]))
                };
                let (disk, from) = self.disk_path(c, &from)?;
                let (_, to) = self.disk_path(c, &to)?;
                if c.nr == SYS_renameat2 && c.a[4] as u32 & !RENAME_NOREPLACE != 0 {
                    return Some(self.unsupported(
                        c,
                        "on a data_dir, RENAME_EXCHANGE and RENAME_WHITEOUT are not modelled",
                        EINVAL,
                    ));
                }
                self.note_disk_paths(disk, &[&from, &to]);
                Some(change(disk, DiskOp::Rename(from, to)))
            }
            SYS_unlink | SYS_unlinkat | SYS_rmdir => {
                let (p, dir) = match c.nr {
                    SYS_unlink => (path(AT_FDCWD, c.a[0]), false),
                    SYS_rmdir => (path(AT_FDCWD, c.a[0]), true),
                    _ => (
                        path(c.a[0] as i32, c.a[1]),
                        c.a[2] as i32 & AT_REMOVEDIR != 0,
                    ),
                };
                let (disk, rel) = self.disk_path(c, &p)?;
                self.note_disk_paths(disk, &[&rel]);
                Some(change(
                    disk,
                    if dir {
                        DiskOp::Rmdir(rel)
                    } else {
                        DiskOp::Unlink(rel)
                    },
                ))
            }
            SYS_mkdir | SYS_mkdirat => {
                let p = if c.nr == SYS_mkdir {
                    path(AT_FDCWD, c.a[0])
                } else {
                    path(c.a[0] as i32, c.a[1])
                };
                let (disk, rel) = self.disk_path(c, &p)?;
                self.note_disk_paths(disk, &[&rel]);
                Some(change(disk, DiskOp::Mkdir(rel)))
            }
            SYS_mknod | SYS_mknodat => {
                let (p, mode) = if c.nr == SYS_mknod {
                    (path(AT_FDCWD, c.a[0]), c.a[1] as u32)
                } else {
                    (path(c.a[0] as i32, c.a[1]), c.a[2] as u32)
                };
                let (disk, rel) = self.disk_path(c, &p)?;
                self.note_disk_paths(disk, &[&rel]);
                Some(match mode & S_IFMT {
                    0 | S_IFREG => change(disk, DiskOp::Create(rel)),
                    _ => self.unsupported(
                        c,
                        "on a data_dir, the disk model has only regular files and directories",
                        EPERM,
                    ),
                })
            }
            SYS_symlink | SYS_symlinkat => {
                let p = if c.nr == SYS_symlink {
                    path(AT_FDCWD, c.a[1])
                } else {
                    path(c.a[1] as i32, c.a[2])
                };
                self.disk_path(c, &p)?;
                Some(self.refuse_by_table(c))
            }
            SYS_link | SYS_linkat => {
                let (a, b) = if c.nr == SYS_link {
                    (path(AT_FDCWD, c.a[0]), path(AT_FDCWD, c.a[1]))
                } else {
                    (path(c.a[0] as i32, c.a[1]), path(c.a[2] as i32, c.a[3]))
                };
                let (disk, a) = self.disk_path(c, &a)?;
                let (_, b) = self.disk_path(c, &b)?;
                self.note_disk_paths(disk, &[&a, &b]);
                Some(change(disk, DiskOp::Link(a, b)))
            }
            SYS_sync => {
                for d in self.disks.all_mut() {
                    d.disk.on_sync_all();
                }
                Some(pass())
            }
            SYS_syncfs => {
                let (disk, _, _) = self.disk_fd(c.pid, c.a[0] as i32)?;
                self.disks.get_mut(disk).disk.on_sync_all();
                Some(pass())
            }
            SYS_dup | SYS_fcntl
                if c.nr == SYS_dup || matches!(c.a[1] as i32, F_DUPFD | F_DUPFD_CLOEXEC) =>
            {
                let (disk, ino, append) = self.disk_fd(c.pid, c.a[0] as i32)?;
                Some(Action::Now(Resume::PassThenExit(
                    None,
                    ExitHook::DupFd(FdKind::Disk { disk, ino, append }),
                )))
            }
            _ => None,
        }
    }

    /// A write to a disk file: asks vfs for a write fault first, then lets
    /// the kernel write and records what it took.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn disk_write(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        disk: usize,
        ino: vfs::Ino,
        append: bool,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        if let Some(e) = self.disks.get_mut(disk).disk.write_fault(ino) {
            self.disk_error(disk, ino, table::name(c.nr), e);
            return err(e.0);
        }
        let iovs = match c.nr {
            SYS_write | SYS_pwrite64 => vec![(c.a[1], c.a[2] as usize)],
            _ => match super::iovec::read_iovecs(c.mem(), c.a[1], c.a[2]) {
                Some(v) => v,
                None => return err(EFAULT),
            },
        };
        let mut data = Vec::new();
        for (base, len) in iovs {
            let mut buf = vec![0u8; len];
            if c.mem().read_mem(base, &mut buf).is_err() {
                return err(EFAULT);
            }
            data.extend_from_slice(&buf);
        }
        // pwritev2 writes at the file position for offset -1, at the end
        // with RWF_APPEND.
        let pwritev2_append = c.nr == SYS_pwritev2 && c.a[5] as i32 & RWF_APPEND != 0;
        let offset = match c.nr {
            SYS_pwritev2 if pwritev2_append => self.disks.get(disk).disk.file_len(ino).unwrap_or(0),
            SYS_pwrite64 | SYS_pwritev => c.a[3],
            SYS_pwritev2 if c.a[3] as i64 != -1 => c.a[3],
            _ if append => self.disks.get(disk).disk.file_len(ino).unwrap_or(0),
            _ => host.position(c.pid, c.a[0] as i32).unwrap_or(0),
        };
        targs.extend([
            c.a[0] as i64,
            data.len() as i64,
            crate::sim::trace::hash_bytes(&data) as i64,
        ]);
        Action::Now(Resume::PassThenExit(
            None,
            ExitHook::DiskWrite {
                disk,
                ino,
                offset,
                data,
            },
        ))
    }

    /// fallocate(fd, 0, offset, len) on a disk file, made as an `ftruncate`
    /// to the length the file would have afterwards. The program sees the
    /// same size and zeros, but the host keeps the range sparse: etcd
    /// preallocates 64 MB per WAL segment, which otherwise fills the host's
    /// disk with every node of every seed's artifacts. Arguments the kernel
    /// would refuse (negative offset, zero length, overflow, a descriptor
    /// not open for writing) go to the real fallocate, so the program gets
    /// the kernel's own error.
    fn sparse_fallocate(
        &self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        disk: usize,
        ino: vfs::Ino,
    ) -> Action {
        let (offset, len) = (c.a[2] as i64, c.a[3] as i64);
        let writable = host.writable(c.pid, c.a[0] as i32);
        let end = offset
            .checked_add(len)
            .filter(|_| offset >= 0 && len > 0 && writable == Some(true));
        let as_ftruncate = end.map(|end| {
            let current = self.disks.get(disk).disk.file_len(ino).unwrap_or(0);
            let mut regs = c.regs;
            regs.orig_rax = libc::SYS_ftruncate as u64;
            regs.rsi = (end as u64).max(current);
            Box::new(regs)
        });
        let restore = as_ftruncate.is_some().then(|| Box::new(c.regs));
        Action::Now(Resume::PassThenExit(
            as_ftruncate,
            ExitHook::DiskChange {
                disk,
                op: DiskOp::Fallocate(ino, c.a[2], c.a[3]),
                restore,
            },
        ))
    }

    /// An fsync or write on disk `disk` that vfs failed with `errno`: the
    /// call's trace event gets the path, and the engine's fault log a
    /// record of it (`failed_disk_calls`).
    fn disk_error(&mut self, disk: usize, ino: vfs::Ino, call: &str, errno: vfs::Errno) {
        let d = self.disks.get(disk);
        let path = d.disk.path_of(ino).map_or_else(
            || "(unnamed file)".into(),
            |p| d.visible.join(p).display().to_string(),
        );
        let node = d.node.clone();
        self.trace.note_paths(vec![path.clone()]);
        self.failed_disk_calls.push(FailedDiskCall {
            node,
            path,
            call: call.to_string(),
            errno,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        add_disk, call, returned, world, zeroed, FakeHost, TempDir, DISK_AT, EPOCH_SECS, PID,
    };
    use super::super::Action;
    use crate::sim::diskstate::FailedDiskCall;
    use crate::sim::fdkind::FdKind;
    use crate::sim::memory::Memory;
    use crate::sim::vclock::NS;
    use crate::sim::world::{DiskOp, ExitHook, Resume};

    const BUF: u64 = 0x1000;

    /// Nanoseconds of REALTIME at virtual time `t`.
    fn realtime(t: u64) -> i128 {
        EPOCH_SECS as i128 * NS as i128 + t as i128
    }

    #[test]
    fn an_open_that_created_a_file_tells_vfs_and_tracks_the_descriptor() {
        let mut sim = world();
        let _root = add_disk(&mut sim, 1 << 20);
        sim.clock.advance_to(5);
        let open = |flags| ExitHook::DiskOpen {
            disk: 0,
            rel: "f".into(),
            flags,
        };
        sim.disk_exit(
            PID,
            open(libc::O_CREAT | libc::O_WRONLY),
            -libc::EACCES as i64,
        );
        assert!(
            sim.disks.get(0).disk.lookup("f").is_err(),
            "failed: nothing to record"
        );
        sim.disk_exit(
            PID,
            open(libc::O_CREAT | libc::O_WRONLY | libc::O_APPEND),
            4,
        );
        let ino = sim.disks.get(0).disk.lookup("f").expect("created");
        let fd = sim.procs[&PID].fds.get(&4).copied();
        assert!(matches!(fd, Some(FdKind::Disk { disk: 0, ino: i, append: true }) if i == ino));
        let root = sim.disks.get(0).disk.lookup("").unwrap();
        for i in [ino, root] {
            assert_eq!(
                sim.file_ids.on_disk(0, i).time_ns,
                realtime(5),
                "{i:?} changed now"
            );
        }
    }

    #[test]
    fn a_write_records_what_the_kernel_took_and_a_rename_moves_the_entry() {
        let mut sim = world();
        let _root = add_disk(&mut sim, 1 << 20);
        let ino = sim.disks.get_mut(0).disk.on_create("a").unwrap();
        let data = b"0123456789".to_vec();
        sim.disk_exit(
            PID,
            ExitHook::DiskWrite {
                disk: 0,
                ino,
                offset: 2,
                data,
            },
            6,
        );
        assert_eq!(
            sim.disks.get(0).disk.file_len(ino).unwrap(),
            8,
            "a short write of 6 at 2"
        );
        sim.clock.advance_to(9);
        let op = DiskOp::Rename("a".into(), "b".into());
        sim.disk_exit(
            PID,
            ExitHook::DiskChange {
                disk: 0,
                op,
                restore: None,
            },
            0,
        );
        let d = &sim.disks.get(0).disk;
        assert!(d.lookup("a").is_err());
        assert_eq!(d.lookup("b").unwrap(), ino);
        assert_eq!(sim.file_ids.on_disk(0, ino).time_ns, realtime(9));
    }

    /// `nr` on disk file descriptor 4 (a file "f" the program opened), with
    /// the other arguments `rest` and ten bytes at `BUF`; the host shows
    /// its position 7 and whether it is `writable`.
    fn on_file(
        sim: &mut crate::sim::state::Sim,
        nr: i64,
        rest: [u64; 5],
        writable: bool,
        targs: &mut Vec<i64>,
    ) -> Action {
        let mem = zeroed(BUF, 16);
        mem.write_mem(BUF, b"0123456789").unwrap();
        let [b, c_, d, e, f] = rest;
        let mut c = call(nr, [4, b, c_, d, e, f], mem);
        c.regs.orig_rax = nr as u64;
        let host = FakeHost::default().file(4, 7, writable);
        sim.sys_disk(&c, &host, targs).expect("a disk call")
    }

    /// A world whose process has file "f" of its disk open as descriptor 4.
    fn with_file() -> (crate::sim::state::Sim, TempDir, vfs::Ino) {
        let mut sim = world();
        let root = add_disk(&mut sim, 1 << 20);
        let ino = sim.disks.get_mut(0).disk.on_create("f").unwrap();
        let file = FdKind::Disk {
            disk: 0,
            ino,
            append: false,
        };
        sim.fd_opened(PID, 4, file, false);
        (sim, root, ino)
    }

    #[test]
    fn a_write_lands_at_the_descriptors_position_and_is_hashed() {
        let (mut sim, _root, ino) = with_file();
        let mut targs = vec![];
        let action = on_file(
            &mut sim,
            libc::SYS_write,
            [BUF, 10, 0, 0, 0],
            true,
            &mut targs,
        );
        let Action::Now(Resume::PassThenExit(
            None,
            ExitHook::DiskWrite {
                ino: i,
                offset,
                data,
                ..
            },
        )) = action
        else {
            panic!("not passed to record the write");
        };
        assert_eq!((i, offset, data.as_slice()), (ino, 7, &b"0123456789"[..]));
        assert_eq!(targs[..2], [4, 10]);
        assert_eq!(
            targs[2],
            crate::sim::trace::hash_bytes(b"0123456789") as i64
        );
    }

    #[test]
    fn a_planned_write_error_fails_the_write_and_is_logged_with_its_path() {
        let (mut sim, _root, _) = with_file();
        let eio = vfs::Errno(libc::EIO);
        sim.disks.get_mut(0).disk.inject_write_error("", eio);
        let action = on_file(
            &mut sim,
            libc::SYS_write,
            [BUF, 10, 0, 0, 0],
            true,
            &mut vec![],
        );
        assert_eq!(returned(action), -(libc::EIO as i64));
        let failed = std::mem::take(&mut sim.failed_disk_calls);
        assert_eq!(
            failed,
            [FailedDiskCall {
                node: "n1".into(),
                path: format!("{DISK_AT}/f"),
                call: "write".into(),
                errno: eio,
            }]
        );
    }

    #[test]
    fn fallocate_grows_the_file_sparsely_unless_the_kernel_must_refuse_it() {
        let (mut sim, _root, ino) = with_file();
        let grow = [0, 100, 50, 0, 0];
        let action = on_file(&mut sim, libc::SYS_fallocate, grow, true, &mut vec![]);
        let Action::Now(Resume::PassThenExit(Some(regs), ExitHook::DiskChange { op, restore, .. })) =
            action
        else {
            panic!("not made an ftruncate");
        };
        assert_eq!((regs.orig_rax, regs.rsi), (libc::SYS_ftruncate as u64, 150));
        assert!(matches!(op, DiskOp::Fallocate(i, 100, 50) if i == ino));
        assert!(restore.is_some());
        // Read-only: the real fallocate runs, for the kernel's EBADF.
        let action = on_file(&mut sim, libc::SYS_fallocate, grow, false, &mut vec![]);
        let Action::Now(Resume::PassThenExit(None, ExitHook::DiskChange { restore: None, .. })) =
            action
        else {
            panic!("rewritten although the kernel refuses it");
        };
    }
}
