//! Calls that move data or make names inside the kernel, where the disk and
//! network models would never see them: refused with a report when they
//! touch a node's `data_dir` file or a simulated socket, passed otherwise.
//! Also the table's default: a trapped call no family handles is refused as
//! the syscall table says.

use super::table::{self, Support};
use super::{pass, Action, Call};
use crate::engine::Supervisor;
use crate::host::fdprobe::FdKind;

impl Supervisor {
    /// sendfile, copy_file_range, splice, tee, vmsplice, preadv2 and (off a
    /// simulated disk) pwritev2.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_guarded(&mut self, c: &Call) -> Action {
        use libc::*;
        // (the descriptor written to, every descriptor argument)
        let (dest, fds): (u64, &[u64]) = match c.nr {
            SYS_sendfile => (c.a[0], &c.a[..2]),
            SYS_copy_file_range | SYS_splice => (c.a[2], &[c.a[0], c.a[2]]),
            SYS_tee => (c.a[1], &c.a[..2]),
            _ => (c.a[0], &c.a[..1]),
        };
        let writes_disk = c.nr != SYS_preadv2 && self.sim.disk_fd(c.pid, dest as i32).is_some();
        let on_socket = fds.iter().any(|&fd| {
            matches!(
                self.sim
                    .procs
                    .get(&c.pid)
                    .and_then(|p| p.fds.get(&(fd as i32))),
                Some(FdKind::Socket(_) | FdKind::Netlink)
            )
        });
        match table::support(c.nr) {
            Support::Guarded { errno, why } if writes_disk || on_socket => {
                self.sim.unsupported(c, why, errno)
            }
            // pwritev2 is modelled on a disk file; a socket's placeholder
            // would take its data instead of the socket.
            _ if on_socket => self.sim.unsupported(
                c,
                "on a simulated socket it would write to the socket's placeholder",
                EOPNOTSUPP,
            ),
            _ => pass(),
        }
    }

    /// A trapped call that no family answers: refused as the table says
    /// (a number past the table is a call newer than faultline).
    pub(super) fn refuse_by_table(&mut self, c: &Call) -> Action {
        match table::support(c.nr) {
            _ if table::row(c.nr).is_none() => {
                let why = format!(
                    "call number {} is newer than faultline's syscall table",
                    c.nr
                );
                self.sim.unsupported(c, &why, libc::ENOSYS)
            }
            Support::Refused { errno, why } | Support::Guarded { errno, why } => {
                self.sim.unsupported(c, why, errno)
            }
            _ => self
                .sim
                .unsupported(c, "trapped but not handled", libc::ENOSYS),
        }
    }
}
