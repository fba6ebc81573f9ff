//! Simulated pipes (`sim::pipes`). A `pipe2` with O_NONBLOCK, an event
//! loop's wake-up pipe, is made in the kernel only to stand in for both
//! ends (its descriptors, `fstat` and `/proc` links stay a real pipe's);
//! the bytes written to it, its readiness and its waits are the
//! supervisor's, so that waking an event loop is answered in place, no
//! call passed to the kernel unsettles what faultline knows of the host's
//! descriptors, and the pipe's capacity is the same on every machine. A
//! blocking pipe (a shell's, a child's standard output) is the kernel's,
//! as before.

use super::iovec::{gather, read_iovecs, scatter, MAX_IO};
use super::poll::{WANT_READ, WANT_WRITE};
use super::{err, pass, ret, Action, Call};
use crate::sim::fdkind::FdKind;
use crate::sim::memory::Memory;
use crate::sim::netstate::VsId;
use crate::sim::pipes::PipeError;
use crate::sim::state::Sim;
use crate::sim::world::{ExitHook, Resume};

impl Sim {
    /// pipe2: with O_NONBLOCK the pipe is simulated (the kernel makes the
    /// placeholder pair, bound at the exit); without, the kernel's.
    pub(super) fn sys_pipe2(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let flags = c.a[1] as i32;
        targs.push(flags as i64);
        if flags & libc::O_NONBLOCK == 0 {
            return pass();
        }
        Action::Now(Resume::PassThenExit(
            None,
            ExitHook::NewPipe { fds: c.a[0] },
        ))
    }

    /// The kernel made the placeholder pipe of a simulated one (`ret` is
    /// pipe2's result, the pair at `fds` in the caller's memory): bind the
    /// two descriptors to a new simulated pipe's ends.
    pub(crate) fn pipe_opened(&mut self, mem: &impl Memory, pid: i32, ret: i64, fds: u64) {
        if ret != 0 {
            return;
        }
        let Ok([read, write]) = mem.read_val::<[i32; 2]>(fds) else {
            return;
        };
        let (r, w) = self.net.open_pipe();
        if let Some(p) = self.procs.get_mut(&pid) {
            p.fds.insert(read, FdKind::Pipe(r));
            p.fds.insert(write, FdKind::Pipe(w));
        }
    }

    /// Every descriptor call on a simulated pipe's end. Calls that do not
    /// move its data or change its flags (a socket call, `fstat`) go to
    /// the kernel's placeholder pipe, which answers them as a pipe.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_pipe_end(
        &mut self,
        c: &Call<impl Memory>,
        vs: VsId,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        targs.push(c.a[0] as i64);
        let dup = || {
            Action::Now(Resume::PassThenExit(
                None,
                ExitHook::DupFd(FdKind::Pipe(vs)),
            ))
        };
        match c.nr {
            SYS_read | SYS_readv => self.pipe_read(c, vs, targs),
            SYS_write | SYS_writev => self.pipe_write(c, vs, targs),
            SYS_dup => dup(),
            SYS_fcntl => match c.a[1] as i32 {
                F_SETFL => {
                    let on = c.a[2] as i32 & O_NONBLOCK != 0;
                    self.net.pipes_mut(vs).set_nonblocking(vs, on);
                    pass()
                }
                F_DUPFD | F_DUPFD_CLOEXEC => dup(),
                F_GETPIPE_SZ => ret(self.net.pipes().capacity(vs) as i64),
                F_SETPIPE_SZ => match self.net.pipes_mut(vs).set_capacity(vs, c.a[2]) {
                    Ok(size) => ret(size as i64),
                    Err(e) => err(e),
                },
                _ => pass(),
            },
            SYS_ioctl => match c.a[1] {
                FIONBIO => match c.mem().read_val::<i32>(c.a[2]) {
                    Ok(on) => {
                        self.net.pipes_mut(vs).set_nonblocking(vs, on != 0);
                        pass()
                    }
                    Err(_) => err(EFAULT),
                },
                FIONREAD => {
                    let n = self.net.pipes().pending(vs) as i32;
                    c.mem()
                        .write_val(c.a[2], &n)
                        .map_or_else(|_| err(EFAULT), |()| ret(0))
                }
                _ => pass(),
            },
            _ => pass(),
        }
    }

    /// read, readv of a read end.
    fn pipe_read(&mut self, c: &Call<impl Memory>, vs: VsId, targs: &mut Vec<i64>) -> Action {
        let Some(iovs) = buffers(c) else {
            return err(libc::EFAULT);
        };
        let want = iovs.iter().map(|&(_, l)| l).sum::<usize>().min(MAX_IO);
        targs.push(want as i64);
        let n = match self.net.pipes().read_len(vs, want) {
            Ok(n) => n,
            Err(e) => return self.pipe_refused(c, vs, e, WANT_READ),
        };
        if n > 0 {
            let data = self.net.pipes_mut(vs).take(vs, n);
            if !scatter(c.mem(), &iovs, &data) {
                return err(libc::EFAULT);
            }
        }
        targs.push(n as i64);
        ret(n as i64)
    }

    /// write, writev to a write end; the bytes go into the trace hash.
    fn pipe_write(&mut self, c: &Call<impl Memory>, vs: VsId, targs: &mut Vec<i64>) -> Action {
        let Some(data) = buffers(c).and_then(|iovs| gather(c.mem(), &iovs, MAX_IO)) else {
            return err(libc::EFAULT);
        };
        targs.extend([
            data.len() as i64,
            crate::sim::trace::hash_bytes(&data) as i64,
        ]);
        let n = match self.net.pipes().write_len(vs, data.len()) {
            Ok(n) => n,
            Err(e) => return self.pipe_refused(c, vs, e, WANT_WRITE),
        };
        if n > 0 {
            self.net.pipes_mut(vs).put(vs, &data[..n]);
        }
        ret(n as i64)
    }

    /// A read or write that moved nothing: EAGAIN on a non-blocking end, a
    /// wait until the end is ready for `mask` (or its other end closes) on
    /// a blocking one, EPIPE and SIGPIPE with no reader, EBADF on the wrong
    /// end.
    fn pipe_refused(&mut self, c: &Call<impl Memory>, vs: VsId, e: PipeError, mask: u32) -> Action {
        match e {
            PipeError::WrongEnd => err(libc::EBADF),
            PipeError::BrokenPipe => self.broken_pipe(c.pid, c.tid, false),
            PipeError::WouldBlock if self.net.pipes().nonblocking(vs) => err(libc::EAGAIN),
            PipeError::WouldBlock => Sim::park_on_simulated(vs, mask, None),
        }
    }
}

/// The buffers of a read or write (one) or a readv or writev (its iovec
/// array); `None` if the array cannot be read.
fn buffers(c: &Call<impl Memory>) -> Option<Vec<super::iovec::IoVec>> {
    match c.nr {
        libc::SYS_read | libc::SYS_write => Some(vec![(c.a[1], c.a[2] as usize)]),
        _ => read_iovecs(c.mem(), c.a[1], c.a[2]),
    }
}
