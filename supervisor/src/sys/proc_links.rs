//! readlink and readlinkat of `/proc` links whose host answer changes from
//! run to run: `/proc/self` and `/proc/thread-self` name the host's pid and
//! tid (the node's processes live in a pid namespace, but `/proc` is the
//! host's), and `/proc/<pid>/fd/N` of a pipe or socket names its host inode
//! number. These are answered with the namespace's ids and the simulated
//! inode numbers `stat` shows; `/proc/<pid>/ns/*` (host namespace ids) is
//! passed and reported as a host-state read; every other link is passed.

use std::os::unix::fs::MetadataExt;

use super::{err, pass, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;

/// What a readlink of a `/proc` path reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Link {
    /// The host's link, the same in every run: let the kernel answer.
    Host,
    /// The host's link, which differs between hosts or runs: passed and
    /// reported.
    HostState,
    /// This text.
    Text(String),
}

/// `pipe:[N]` or `socket:[N]` with the kind and host inode number.
fn inode_link(target: &str) -> Option<(&str, u64)> {
    let (kind, rest) = target.split_once(":[")?;
    let ino = rest.strip_suffix(']')?.parse().ok()?;
    matches!(kind, "pipe" | "socket").then_some((kind, ino))
}

impl Sim {
    /// readlink (path, buf, size) and readlinkat (dirfd, path, buf, size).
    pub(super) fn sys_readlink(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let (path, buf, size) = if c.nr == libc::SYS_readlink {
            (c.a[0], c.a[1], c.a[2])
        } else {
            (c.a[1], c.a[2], c.a[3])
        };
        let Ok(path) = c.mem().read_cstr(path, 4096) else {
            return err(libc::EFAULT);
        };
        // A relative path or one through a directory descriptor is not one
        // of these (a program reaching /proc that way sees the host's).
        let Some(rest) = path.strip_prefix(b"/proc/") else {
            return pass();
        };
        match self.proc_link(c, &String::from_utf8_lossy(rest)) {
            Link::Host => pass(),
            Link::HostState => {
                self.note_host_state(c.pid, "readlink /proc/<pid>/ns".to_string());
                pass()
            }
            Link::Text(text) => {
                targs.push(text.len() as i64);
                if (size as i64) <= 0 {
                    return err(libc::EINVAL);
                }
                let n = text.len().min(size as usize);
                if c.mem().write_mem(buf, &text.as_bytes()[..n]).is_err() {
                    return err(libc::EFAULT);
                }
                ret(n as i64)
            }
        }
    }

    /// What `/proc/<rest>`, read as a link by the caller, reads.
    fn proc_link(&mut self, c: &Call<impl Memory>, rest: &str) -> Link {
        let (first, file) = rest.split_once('/').unwrap_or((rest, ""));
        let Some(ns_pid) = self.procs.get(&c.pid).map(|p| p.ns_pid) else {
            return Link::Host;
        };
        let host_pid = match first {
            "self" if file.is_empty() => return Link::Text(ns_pid.to_string()),
            "thread-self" if file.is_empty() => {
                let ns_tid = self.threads[&c.vtid].ns_tid;
                return Link::Text(format!("{ns_pid}/task/{ns_tid}"));
            }
            "self" | "thread-self" => c.pid,
            // Not a pid of the node's: the host's answer (usually ENOENT).
            n => match n.parse().ok().and_then(|n| self.pid_in_namespace(c.pid, n)) {
                Some(pid) => pid,
                None => return Link::Host,
            },
        };
        if file.starts_with("ns/") {
            return Link::HostState;
        }
        let Some(fd) = file.strip_prefix("fd/") else {
            return Link::Host;
        };
        let host_path = format!("/proc/{host_pid}/fd/{fd}");
        let Ok(target) = std::fs::read_link(&host_path) else {
            return Link::Host;
        };
        let target = target.to_string_lossy();
        let Some((kind, _)) = inode_link(&target) else {
            return Link::Host;
        };
        let Ok(meta) = std::fs::metadata(&host_path) else {
            return Link::Host;
        };
        let id = self.identity(None, meta.dev(), meta.ino());
        Link::Text(format!("{kind}:[{}]", id.ino))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, PID};
    use super::*;
    use crate::sim::world::Resume;

    const PATH: u64 = 0x1000;
    const BUF: u64 = 0x2000;

    /// readlink(path, BUF, size) by the test thread: what it answered and
    /// the bytes it wrote.
    fn readlink(sim: &mut Sim, path: &str, size: u64) -> (Action, Vec<u8>) {
        let mem = zeroed(BUF, 64);
        // read_cstr reads whole chunks: the path's page is there.
        let mut bytes = path.as_bytes().to_vec();
        bytes.resize(4096, 0);
        mem.map(PATH, &bytes);
        let c = call(libc::SYS_readlink, [PATH, BUF, size, 0, 0, 0], mem);
        let action = sim.sys_readlink(&c, &mut vec![]);
        let mut out = vec![0u8; 64];
        c.mem().read_mem(BUF, &mut out).unwrap();
        (action, out)
    }

    #[test]
    fn proc_self_names_the_namespace_pid_and_tid() {
        let mut sim = world();
        let (action, out) = readlink(&mut sim, "/proc/self", 64);
        assert_eq!(returned(action), PID.to_string().len() as i64);
        assert!(out.starts_with(PID.to_string().as_bytes()));
        let (action, out) = readlink(&mut sim, "/proc/thread-self", 64);
        let want = format!("{PID}/task/{PID}");
        assert_eq!(returned(action), want.len() as i64);
        assert!(out.starts_with(want.as_bytes()));
    }

    #[test]
    fn a_short_buffer_gets_the_start_and_no_buffer_is_invalid() {
        let mut sim = world();
        let (action, out) = readlink(&mut sim, "/proc/thread-self", 2);
        assert_eq!(returned(action), 2);
        assert_eq!(&out[..3], &[b'1', b'0', 0]);
        let (action, _) = readlink(&mut sim, "/proc/self", 0);
        assert_eq!(returned(action), -(libc::EINVAL as i64));
    }

    #[test]
    fn namespace_links_are_reported_and_other_paths_passed() {
        let mut sim = world();
        let (action, _) = readlink(&mut sim, "/proc/self/ns/net", 64);
        assert!(matches!(action, Action::Now(Resume::Pass)));
        assert_eq!(sim.host_state.values().sum::<u64>(), 1);
        let (action, _) = readlink(&mut sim, "/usr/bin/cc", 64);
        assert!(matches!(action, Action::Now(Resume::Pass)));
        assert_eq!(sim.host_state.values().sum::<u64>(), 1);
    }

    #[test]
    fn pipe_and_socket_links_name_their_inode() {
        assert_eq!(inode_link("pipe:[123]"), Some(("pipe", 123)));
        assert_eq!(inode_link("socket:[9]"), Some(("socket", 9)));
        assert_eq!(inode_link("anon_inode:[eventfd]"), None);
        assert_eq!(inode_link("/tmp/x:[1]"), None);
        assert_eq!(inode_link("pipe:[12"), None);
    }
}
