//! Calls that move data or make names inside the kernel, where the disk and
//! network models would never see them: refused with a report when they
//! touch a node's `data_dir` file, a simulated socket or a simulated pipe,
//! passed otherwise.
//! Also the table's default: a trapped call no family handles is refused as
//! the syscall table says.

use super::table::{self, Support};
use super::{pass, Action, Call};
use crate::sim::fdkind::FdKind;
use crate::sim::memory::Memory;
use crate::sim::state::Sim;

impl Sim {
    /// sendfile, copy_file_range, splice, tee, vmsplice, preadv2 and (off a
    /// simulated disk) pwritev2.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_guarded(&mut self, c: &Call<impl Memory>) -> Action {
        use libc::*;
        // (the descriptor written to, every descriptor argument)
        let (dest, fds): (u64, &[u64]) = match c.nr {
            SYS_sendfile => (c.a[0], &c.a[..2]),
            SYS_copy_file_range | SYS_splice => (c.a[2], &[c.a[0], c.a[2]]),
            SYS_tee => (c.a[1], &c.a[..2]),
            _ => (c.a[0], &c.a[..1]),
        };
        let writes_disk = c.nr != SYS_preadv2 && self.disk_fd(c.pid, dest as i32).is_some();
        let on_simulated = fds.iter().any(|&fd| {
            matches!(
                self.procs.get(&c.pid).and_then(|p| p.fds.get(&(fd as i32))),
                Some(FdKind::Socket(_) | FdKind::Pipe(_) | FdKind::Netlink)
            )
        });
        match table::support(c.nr) {
            Support::Guarded { errno, why } if writes_disk || on_simulated => {
                self.unsupported(c, why, errno)
            }
            // pwritev2 is modelled on a disk file; a socket's or pipe's
            // placeholder would take its data instead.
            _ if on_simulated => self.unsupported(
                c,
                "on a simulated socket or pipe it would write to the placeholder",
                EOPNOTSUPP,
            ),
            _ => pass(),
        }
    }

    /// A trapped call that no family answers: refused as the table says
    /// (a number past the table is a call newer than faultline).
    pub(super) fn refuse_by_table(&mut self, c: &Call<impl Memory>) -> Action {
        match table::support(c.nr) {
            _ if table::row(c.nr).is_none() => {
                let why = format!(
                    "call number {} is newer than faultline's syscall table",
                    c.nr
                );
                self.unsupported(c, &why, libc::ENOSYS)
            }
            Support::Refused { errno, why } | Support::Guarded { errno, why } => {
                self.unsupported(c, why, errno)
            }
            _ => self.unsupported(c, "trapped but not handled", libc::ENOSYS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{add_disk, call, returned, world, zeroed, PID};
    use super::super::Action;
    use crate::sim::fdkind::FdKind;
    use crate::sim::state::Sim;
    use crate::sim::world::Resume;

    const DISK_FD: u64 = 3;
    const SOCKET_FD: u64 = 4;
    const OTHER_FD: u64 = 5;

    /// What the guard answers for call `nr` with arguments `a`, as an errno
    /// (0: passed to the kernel).
    fn guard(sim: &mut Sim, nr: i64, a: [u64; 6]) -> i64 {
        match sim.sys_guarded(&call(nr, a, zeroed(0x1000, 8))) {
            Action::Now(Resume::Pass) => 0,
            action => -returned(action),
        }
    }

    #[test]
    fn copies_in_the_kernel_are_refused_onto_disks_and_sockets_only() {
        let mut sim = world();
        let _root = add_disk(&mut sim, 1 << 20);
        let ino = sim.disks.get_mut(0).disk.on_create("f").unwrap();
        let disk = FdKind::Disk {
            disk: 0,
            ino,
            append: false,
        };
        sim.fd_opened(PID, DISK_FD as i64, disk, false);
        sim.fd_opened(PID, SOCKET_FD as i64, FdKind::Netlink, false);
        let einval = libc::EINVAL as i64;
        let sendfile = |out: u64, input: u64| [out, input, 0, 4096, 0, 0];
        assert_eq!(
            guard(&mut sim, libc::SYS_sendfile, sendfile(DISK_FD, OTHER_FD)),
            einval
        );
        assert_eq!(
            guard(&mut sim, libc::SYS_sendfile, sendfile(OTHER_FD, DISK_FD)),
            0,
            "from a disk"
        );
        assert_eq!(
            guard(&mut sim, libc::SYS_sendfile, sendfile(OTHER_FD, SOCKET_FD)),
            einval
        );
        let splice = [OTHER_FD, 0, DISK_FD, 0, 4096, 0];
        assert_eq!(guard(&mut sim, libc::SYS_splice, splice), einval);
        // preadv2 only reads: from a disk it passes, from a socket it fails.
        let preadv2 = |fd: u64| [fd, 0x1000, 1, 0, 0, 0];
        assert_eq!(guard(&mut sim, libc::SYS_preadv2, preadv2(DISK_FD)), 0);
        let eopnotsupp = libc::EOPNOTSUPP as i64;
        assert_eq!(
            guard(&mut sim, libc::SYS_preadv2, preadv2(SOCKET_FD)),
            eopnotsupp
        );
        assert_eq!(
            guard(&mut sim, libc::SYS_tee, [OTHER_FD, OTHER_FD, 1, 0, 0, 0]),
            0
        );
    }

    #[test]
    fn the_table_answers_calls_no_family_handles() {
        let mut sim = world();
        let answer = |sim: &mut Sim, nr: i64| {
            returned(sim.refuse_by_table(&call(nr, [0; 6], zeroed(0x1000, 8))))
        };
        assert_eq!(
            answer(&mut sim, libc::SYS_io_uring_setup),
            -(libc::ENOSYS as i64)
        );
        assert_eq!(answer(&mut sim, 100_000), -(libc::ENOSYS as i64));
        let messages: Vec<String> = std::mem::take(&mut sim.diagnostics)
            .into_list()
            .into_iter()
            .map(|d| d.message)
            .collect();
        assert!(
            messages[0].contains("io_uring would bypass the sandbox"),
            "{messages:?}"
        );
        assert!(
            messages[1].contains("newer than faultline's syscall table"),
            "{messages:?}"
        );
    }
}
