//! readlink and readlinkat of `/proc` links whose host answer changes from
//! run to run: `/proc/self` and `/proc/thread-self` name the host's pid and
//! tid (the node's processes live in a pid namespace, but `/proc` is the
//! host's), and `/proc/<pid>/fd/N` of a pipe or socket names its host inode
//! number. These are answered with the namespace's ids and the simulated
//! inode numbers `stat` shows; `/proc/<pid>/ns/*` (host namespace ids) is
//! passed and reported as a host-state read; every other link is passed.

use std::os::unix::fs::MetadataExt;

use super::{err, pass, ret, Action, Call};
use crate::engine::Supervisor;
use crate::host::tracee::Memory;

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

impl Supervisor {
    /// readlink (path, buf, size) and readlinkat (dirfd, path, buf, size).
    pub(super) fn sys_readlink(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
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
                self.sim
                    .note_host_state(c.pid, "readlink /proc/<pid>/ns".to_string());
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
    fn proc_link(&mut self, c: &Call, rest: &str) -> Link {
        let (first, file) = rest.split_once('/').unwrap_or((rest, ""));
        let Some(proc) = self.sim.procs.get(&c.pid) else {
            return Link::Host;
        };
        let (ns_pid, root) = (proc.ns_pid, proc.ns_root);
        let host_pid = match first {
            "self" | "thread-self" if file.is_empty() => {
                return Link::Text(if first == "self" {
                    ns_pid.to_string()
                } else {
                    let ns_tid = self.sim.threads[&c.vtid].ns_tid;
                    format!("{ns_pid}/task/{ns_tid}")
                });
            }
            "self" | "thread-self" => c.pid,
            n => match n.parse::<i32>() {
                Ok(n) => match self
                    .sim
                    .procs
                    .values()
                    .find(|p| p.ns_root == root && p.ns_pid == n)
                {
                    Some(p) => p.pid,
                    // Not the node's: the host's answer (usually ENOENT).
                    None => return Link::Host,
                },
                Err(_) => return Link::Host,
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
        let id = self.sim.file_ids.elsewhere(meta.dev(), meta.ino());
        Link::Text(format!("{kind}:[{}]", id.ino))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_and_socket_links_name_their_inode() {
        assert_eq!(inode_link("pipe:[123]"), Some(("pipe", 123)));
        assert_eq!(inode_link("socket:[9]"), Some(("socket", 9)));
        assert_eq!(inode_link("anon_inode:[eventfd]"), None);
        assert_eq!(inode_link("/tmp/x:[1]"), None);
        assert_eq!(inode_link("pipe:[12"), None);
    }
}
