//! Descriptors passed over unix sockets (`SCM_RIGHTS`): a program's seccomp
//! listener handed to the supervisor, and a start request and its answer
//! between the supervisor and the spawner (bytes with descriptors).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Descriptors one message may carry: a start request's two output
/// descriptors, the channel and the listener's hand-over end.
pub const MAX_FDS: usize = 4;

/// Calls `f` with a message header for the `len` bytes at `base` whose
/// control buffer, on this stack frame, has room for [`MAX_FDS`]
/// descriptors. Allocates nothing, so a forked child may use it before
/// exec.
fn with_message<R>(base: *mut u8, len: usize, f: impl FnOnce(&mut libc::msghdr) -> R) -> R {
    let mut iov = libc::iovec {
        iov_base: base as *mut libc::c_void,
        iov_len: len,
    };
    // u64s: aligned for a cmsghdr.
    let mut control = [0u64; 8];
    // SAFETY: a zeroed msghdr is valid; it points only into the locals
    // above and `bytes`, which outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = unsafe { libc::CMSG_SPACE((MAX_FDS * 4) as u32) } as usize;
    f(&mut msg)
}

/// Sends `bytes` (not empty) and `fds` as one message on `sock`;
/// async-signal-safe, and no SIGPIPE if the other end is gone.
pub fn send(sock: RawFd, bytes: &[u8], fds: &[RawFd]) -> io::Result<()> {
    assert!(fds.len() <= MAX_FDS && !bytes.is_empty());
    // sendmsg only reads the bytes; the iovec's pointer is mutable by type.
    let sent = with_message(bytes.as_ptr() as *mut u8, bytes.len(), |msg| {
        // SAFETY: the control buffer has room for MAX_FDS descriptors.
        unsafe {
            if fds.is_empty() {
                msg.msg_control = std::ptr::null_mut();
                msg.msg_controllen = 0;
            } else {
                msg.msg_controllen = libc::CMSG_SPACE((fds.len() * 4) as u32) as usize;
                let cmsg = libc::CMSG_FIRSTHDR(msg);
                (*cmsg).cmsg_level = libc::SOL_SOCKET;
                (*cmsg).cmsg_type = libc::SCM_RIGHTS;
                (*cmsg).cmsg_len = libc::CMSG_LEN((fds.len() * 4) as u32) as usize;
                let data = libc::CMSG_DATA(cmsg) as *mut i32;
                for (i, fd) in fds.iter().enumerate() {
                    std::ptr::write_unaligned(data.add(i), *fd);
                }
            }
            loop {
                let n = libc::sendmsg(sock, msg, libc::MSG_NOSIGNAL);
                if n >= 0 || *libc::__errno_location() != libc::EINTR {
                    break n;
                }
            }
        }
    });
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The next message on `sock`: its bytes and the descriptors it carried
/// (close-on-exec). None at end of file: the other end is closed.
pub fn receive(sock: &OwnedFd) -> io::Result<Option<(Vec<u8>, Vec<OwnedFd>)>> {
    let mut bytes = vec![0u8; next_len(sock)?.max(1)];
    let (n, fds, flags) = with_message(bytes.as_mut_ptr(), bytes.len(), |msg| {
        // SAFETY: recvmsg fills the message's own buffers; the descriptors
        // it carries are ours from then on.
        unsafe {
            let n = loop {
                let n = libc::recvmsg(sock.as_raw_fd(), msg, libc::MSG_CMSG_CLOEXEC);
                if n >= 0 || *libc::__errno_location() != libc::EINTR {
                    break n;
                }
            };
            let mut fds = Vec::new();
            if n > 0 {
                let mut cmsg = libc::CMSG_FIRSTHDR(msg);
                while !cmsg.is_null() {
                    if (*cmsg).cmsg_level == libc::SOL_SOCKET
                        && (*cmsg).cmsg_type == libc::SCM_RIGHTS
                    {
                        let data = libc::CMSG_DATA(cmsg) as *const i32;
                        let count = ((*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize) / 4;
                        for i in 0..count {
                            fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                        }
                    }
                    cmsg = libc::CMSG_NXTHDR(msg, cmsg);
                }
            }
            (n, fds, msg.msg_flags)
        }
    });
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Ok(None);
    }
    if flags & (libc::MSG_TRUNC | libc::MSG_CTRUNC) != 0 {
        return Err(io::Error::other(format!(
            "a message with over {MAX_FDS} descriptors was cut short"
        )));
    }
    bytes.truncate(n as usize);
    Ok(Some((bytes, fds)))
}

/// The length of the next message on `sock`, once one comes (0 at end of
/// file): a message keeps its bounds, and the kernel tells its whole
/// length to a peek that takes none of it.
fn next_len(sock: &OwnedFd) -> io::Result<usize> {
    loop {
        // SAFETY: a zero-length peek writes nothing.
        let n = unsafe {
            libc::recv(
                sock.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_PEEK | libc::MSG_TRUNC,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Sends descriptor `fd` alone (one byte with it) on `sock`:
/// async-signal-safe, for a program's side before exec.
pub fn send_fd(sock: RawFd, fd: RawFd) {
    let _ = send(sock, &[0], &[fd]);
}

/// The descriptor sent alone on `sock`; None if the sender exec'd or died
/// without sending one.
pub fn receive_fd(sock: &OwnedFd) -> Option<OwnedFd> {
    let (_, fds) = receive(sock).ok()??;
    fds.into_iter().next()
}

/// A unix `SOCK_SEQPACKET` pair (messages keep their bounds), both ends
/// close-on-exec.
pub fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1i32; 2];
    // SAFETY: socketpair fills two descriptors we then own.
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};

    #[test]
    fn bytes_and_descriptors_arrive_together() {
        let (a, b) = socket_pair().unwrap();
        let mut file = tempfile_with(b"carried");
        send(a.as_raw_fd(), b"hello", &[file.as_raw_fd(), 0]).unwrap();
        let (bytes, fds) = receive(&b).unwrap().expect("a message");
        assert_eq!(bytes, b"hello");
        assert_eq!(fds.len(), 2);
        let mut got = std::fs::File::from(fds.into_iter().next().unwrap());
        got.rewind().unwrap();
        let mut text = String::new();
        got.read_to_string(&mut text).unwrap();
        assert_eq!(text, "carried");
        file.write_all(b"!").unwrap();
        drop(a);
        assert!(receive(&b).unwrap().is_none(), "end of file once closed");
    }

    #[test]
    fn a_lone_descriptor_round_trips() {
        let (a, b) = socket_pair().unwrap();
        send_fd(a.as_raw_fd(), 1);
        assert!(receive_fd(&b).is_some());
        drop(a);
        assert!(receive_fd(&b).is_none());
    }

    fn tempfile_with(text: &[u8]) -> std::fs::File {
        let path = std::env::temp_dir().join(format!("faultline-fdpass-{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        f.write_all(text).unwrap();
        f
    }
}
