//! The supervisor's side of the simulated network: vnet itself, which
//! descriptor stands for which virtual socket, the simulated pipes, and the
//! epoll registrations of both (kept here, not in the kernel, since the
//! kernel only sees a placeholder descriptor).

use crate::hashing::HashMap;
use std::collections::BTreeMap;
use std::path::PathBuf;

use vnet::{Domain, HostId, Kind, Network, Readiness, SocketId};

use crate::sim::pipes::Pipes;

/// Index of a virtual socket or of a simulated pipe's end in [`NetState`].
pub type VsId = u32;

/// One virtual socket, shared by every descriptor that refers to it.
#[derive(Debug)]
pub struct VSocket {
    /// The socket in vnet.
    pub net: SocketId,
    /// Stream or datagram.
    pub kind: Kind,
    /// AF_INET or AF_INET6 (how addresses are shown to the program).
    pub domain: Domain,
    /// O_NONBLOCK of the open file (shared by dup'd descriptors, as in Linux).
    pub nonblocking: bool,
    /// Descriptors referring to it, across processes.
    pub refs: u32,
}

/// A virtual socket or pipe end registered in an epoll instance.
#[derive(Debug, Clone)]
pub struct EpollReg {
    /// The descriptor number it was added under.
    pub fd: i32,
    /// The socket or pipe end.
    pub vs: VsId,
    /// Interest mask and flags (EPOLLIN, EPOLLOUT, EPOLLET, EPOLLONESHOT...).
    pub events: u32,
    /// The user's data word.
    pub data: u64,
    /// Edge-triggered: readiness changed since the last report.
    pub edge: bool,
    /// EPOLLONESHOT: reported once, disabled until EPOLL_CTL_MOD.
    pub disabled: bool,
}

const EPOLLIN: u32 = 0x001;
const EPOLLPRI: u32 = 0x002;
const EPOLLOUT: u32 = 0x004;
const EPOLLERR: u32 = 0x008;
const EPOLLHUP: u32 = 0x010;
const EPOLLRDHUP: u32 = 0x2000;
const EPOLLONESHOT: u32 = 1 << 30;
const EPOLLET: u32 = 1 << 31;

/// poll(2)/epoll event bits (they share values) for a readiness.
pub fn event_bits(r: Readiness) -> u32 {
    let mut ev = 0;
    if r.readable {
        ev |= EPOLLIN;
    }
    if r.writable {
        ev |= EPOLLOUT;
    }
    if r.err {
        ev |= EPOLLERR;
    }
    if r.hup {
        ev |= EPOLLHUP;
    }
    if r.rdhup {
        ev |= EPOLLRDHUP;
    }
    ev
}

/// What the simulated network needs in the supervisor.
pub struct NetState {
    /// The network: read through [`NetState::net`], changed through
    /// [`NetState::net_mut`], which counts the change.
    net: Network,
    /// Counts the changes that may have changed what is ready (every
    /// mutable access to the network, every registration, every socket
    /// added or dropped): a waiter found not ready at one count stays not
    /// ready until it moves.
    generation: u64,
    /// Host ids by name.
    pub hosts: BTreeMap<String, HostId>,
    socks: BTreeMap<VsId, VSocket>,
    by_net: HashMap<SocketId, VsId>,
    /// The simulated pipes, whose ends are numbered with the sockets.
    pipes: Pipes,
    next_vs: VsId,
    /// Registrations per (host pid, epoll fd), in registration order.
    epolls: BTreeMap<(i32, i32), Vec<EpollReg>>,
    /// Descriptors that are dups of an epoll instance in `epolls`:
    /// (pid, fd) to the (pid, fd) its registrations are kept under.
    epoll_aliases: BTreeMap<(i32, i32), (i32, i32)>,
    /// Where the simulated /etc files live on the host.
    dir: PathBuf,
    /// Replies waiting on netlink sockets, per (host pid, fd).
    pub netlink: BTreeMap<(i32, i32), Vec<u8>>,
}

/// Why a run's network could not be set up (bad input, or a file faultline
/// could not write).
#[derive(Debug, thiserror::Error)]
pub enum NetSetupError {
    /// The `[net]` settings are invalid.
    #[error("network settings: {0}")]
    Settings(#[source] vnet::ConfigError),
    /// A host name vnet refuses (a duplicate, say).
    #[error("host {name:?}: {why}")]
    Host {
        /// The name.
        name: String,
        /// vnet's reason.
        #[source]
        why: vnet::HostError,
    },
    /// A simulated /etc file could not be written.
    #[error("{path}: {err}")]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        err: std::io::Error,
    },
}

impl NetState {
    /// A network with the given hosts; writes the simulated /etc files into `dir`.
    pub fn new(
        seed: u64,
        config: vnet::NetConfig,
        host_names: &[String],
        dir: &std::path::Path,
    ) -> Result<NetState, NetSetupError> {
        config.validate().map_err(NetSetupError::Settings)?;
        let mut net = Network::new(crate::sim::seeds::Streams::split(seed).net, config);
        let mut hosts = BTreeMap::new();
        for name in host_names {
            let id = net.add_host(name).map_err(|why| NetSetupError::Host {
                name: name.clone(),
                why,
            })?;
            hosts.insert(name.clone(), id);
        }
        // Absolute: the programs open these files from their own working
        // directories, not faultline's.
        let dir = &std::path::absolute(dir).map_err(|err| NetSetupError::Write {
            path: dir.to_path_buf(),
            err,
        })?;
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|err| NetSetupError::Write { path, err })
        };
        std::fs::create_dir_all(dir).map_err(|err| NetSetupError::Write {
            path: dir.to_path_buf(),
            err,
        })?;
        write("hosts", &net.hosts_file())?;
        // No name server is reachable: lookups beyond /etc/hosts fail closed.
        write(
            "resolv.conf",
            "# faultline: no DNS inside the simulation\noptions attempts:1 timeout:1\n",
        )?;
        for name in host_names {
            write(&format!("hostname-{name}"), &format!("{name}\n"))?;
        }
        Ok(NetState {
            net,
            generation: 1,
            hosts,
            socks: BTreeMap::new(),
            by_net: HashMap::default(),
            pipes: Pipes::default(),
            next_vs: 1,
            epolls: BTreeMap::new(),
            epoll_aliases: BTreeMap::new(),
            dir: dir.to_path_buf(),
            netlink: BTreeMap::new(),
        })
    }

    /// The network, to read.
    pub fn net(&self) -> &Network {
        &self.net
    }

    /// The network, to change: counted as a change of readiness.
    pub fn net_mut(&mut self) -> &mut Network {
        self.changed();
        &mut self.net
    }

    /// The count of changes that may have changed readiness (see
    /// `generation`); never 0.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Something that may change readiness happened.
    fn changed(&mut self) {
        self.generation += 1;
    }

    /// The simulated stand-in for a system file a program on `host` opens:
    /// /etc/hosts, /etc/resolv.conf, and the host name files.
    pub fn redirect(&self, path: &[u8], host: HostId) -> Option<PathBuf> {
        match path {
            b"/etc/hosts" => Some(self.dir.join("hosts")),
            b"/etc/resolv.conf" => Some(self.dir.join("resolv.conf")),
            b"/etc/hostname" | b"/proc/sys/kernel/hostname" => Some(
                self.dir
                    .join(format!("hostname-{}", self.net.host_name(host))),
            ),
            _ => None,
        }
    }

    /// The folder of the simulated /etc files, where other stand-ins for
    /// host files (the simulated /proc files) are written too.
    pub fn stand_in_dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// A fresh id for a socket or pipe end.
    fn next_id(&mut self) -> VsId {
        let vs = self.next_vs;
        self.next_vs += 1;
        vs
    }

    /// Registers a new virtual socket with one reference.
    pub fn add(&mut self, net: SocketId, nonblocking: bool) -> VsId {
        self.changed();
        let vs = self.next_id();
        let kind = self.net.kind(net).unwrap_or(Kind::Stream);
        let domain = self.net.domain(net).unwrap_or(Domain::Inet);
        self.socks.insert(
            vs,
            VSocket {
                net,
                kind,
                domain,
                nonblocking,
                refs: 1,
            },
        );
        self.by_net.insert(net, vs);
        vs
    }

    /// The socket behind `vs`.
    pub fn get(&self, vs: VsId) -> Option<&VSocket> {
        self.socks.get(&vs)
    }

    /// Mutable access to the socket behind `vs`.
    pub fn get_mut(&mut self, vs: VsId) -> Option<&mut VSocket> {
        self.changed();
        self.socks.get_mut(&vs)
    }

    /// A new simulated pipe, its ends non-blocking with one descriptor
    /// each: (read end, write end).
    pub fn open_pipe(&mut self) -> (VsId, VsId) {
        self.changed();
        let (read, write) = (self.next_id(), self.next_id());
        self.pipes.open(read, write);
        (read, write)
    }

    /// The simulated pipes, to read.
    pub fn pipes(&self) -> &Pipes {
        &self.pipes
    }

    /// The simulated pipes, to change the pipe of end `vs`: counted as a
    /// change of readiness, and the edge-triggered registrations of both
    /// its ends report again.
    pub fn pipes_mut(&mut self, vs: VsId) -> &mut Pipes {
        self.changed();
        let ends = [Some(vs), self.pipes.peer(vs)];
        self.mark_edges(|r| ends.contains(&Some(r)));
        &mut self.pipes
    }

    /// Marks the epoll registrations of the sockets and pipe ends `of`
    /// picks as changed (edge-triggered ones report again).
    fn mark_edges(&mut self, of: impl Fn(VsId) -> bool) {
        for regs in self.epolls.values_mut() {
            for r in regs.iter_mut().filter(|r| of(r.vs)) {
                r.edge = true;
            }
        }
    }

    /// One more descriptor refers to `vs` (dup, fork).
    pub fn add_ref(&mut self, vs: VsId) {
        self.changed();
        if let Some(s) = self.socks.get_mut(&vs) {
            s.refs += 1;
        }
        self.pipes.add_ref(vs);
    }

    /// A descriptor of `vs` in process `pid` was closed; the socket or
    /// pipe end closes with its last descriptor.
    pub fn drop_ref(&mut self, pid: i32, fd: i32, vs: VsId, now: u64) {
        self.changed();
        for regs in self
            .epolls
            .iter_mut()
            .filter(|((p, _), _)| *p == pid)
            .map(|(_, r)| r)
        {
            regs.retain(|r| !(r.fd == fd && r.vs == vs));
        }
        let closed = if self.pipes.has(vs) {
            let ends = self.pipes.drop_ref(vs);
            if let Some(ends) = ends {
                self.mark_edges(|r| ends.contains(&r));
            }
            ends.is_some()
        } else {
            self.drop_socket_ref(vs, now)
        };
        if closed {
            for regs in self.epolls.values_mut() {
                regs.retain(|r| r.vs != vs);
            }
        }
    }

    /// One descriptor fewer refers to socket `vs`; true if that was its
    /// last and it closed.
    fn drop_socket_ref(&mut self, vs: VsId, now: u64) -> bool {
        let Some(s) = self.socks.get_mut(&vs) else {
            return false;
        };
        s.refs = s.refs.saturating_sub(1);
        if s.refs > 0 {
            return false;
        }
        let net = s.net;
        self.socks.remove(&vs);
        self.by_net.remove(&net);
        let _ = self.net.close(net, now);
        true
    }

    /// Forgets an epoll descriptor that was closed: a dup of it keeps the
    /// registrations (the instance lives on), else they go.
    pub fn drop_epoll(&mut self, pid: i32, epfd: i32) {
        self.changed();
        let key = (pid, epfd);
        if self.epoll_aliases.remove(&key).is_some() {
            return;
        }
        let Some(regs) = self.epolls.remove(&key) else {
            return;
        };
        let dups: Vec<(i32, i32)> = self
            .epoll_aliases
            .iter()
            .filter(|(_, to)| **to == key)
            .map(|(from, _)| *from)
            .collect();
        if let Some((&heir, rest)) = dups.split_first() {
            self.epoll_aliases.remove(&heir);
            for d in rest {
                self.epoll_aliases.insert(*d, heir);
            }
            self.epolls.insert(heir, regs);
        }
    }

    /// The key an epoll descriptor's registrations are kept under (itself,
    /// unless it is a known dup of another).
    pub fn epoll_key(&self, key: (i32, i32)) -> (i32, i32) {
        self.epoll_aliases.get(&key).copied().unwrap_or(key)
    }

    /// Whether the descriptor is an epoll instance with registrations here,
    /// or a known dup of one.
    pub fn knows_epoll(&self, key: (i32, i32)) -> bool {
        self.epolls.contains_key(&key) || self.epoll_aliases.contains_key(&key)
    }

    /// The process's epoll descriptors that hold registrations.
    pub fn epoll_fds(&self, pid: i32) -> Vec<i32> {
        self.epolls
            .keys()
            .filter(|(p, _)| *p == pid)
            .map(|(_, fd)| *fd)
            .collect()
    }

    /// Records that `dup` is the same epoll instance as `original`.
    pub fn alias_epoll(&mut self, dup: (i32, i32), original: (i32, i32)) {
        self.changed();
        let to = self.epoll_key(original);
        if dup != to {
            self.epoll_aliases.insert(dup, to);
        }
    }

    /// Copies a process's epoll registrations to its fork child.
    pub fn fork_epolls(&mut self, parent: i32, child: i32) {
        self.changed();
        let copies: Vec<((i32, i32), Vec<EpollReg>)> = self
            .epolls
            .iter()
            .filter(|((p, _), _)| *p == parent)
            .map(|((_, fd), regs)| ((child, *fd), regs.clone()))
            .collect();
        self.epolls.extend(copies);
        let aliases: Vec<((i32, i32), (i32, i32))> = self
            .epoll_aliases
            .iter()
            .filter(|((p, _), _)| *p == parent)
            .map(|((_, fd), (_, to))| ((child, *fd), (child, *to)))
            .collect();
        self.epoll_aliases.extend(aliases);
    }

    /// The readiness of `vs` now.
    pub fn readiness(&self, vs: VsId) -> Readiness {
        if self.pipes.has(vs) {
            return self.pipes.readiness(vs);
        }
        self.socks
            .get(&vs)
            .and_then(|s| self.net.readiness(s.net).ok())
            .unwrap_or(Readiness {
                readable: true,
                writable: true,
                hup: true,
                rdhup: true,
                err: true,
            })
    }

    /// Delivers what is due at `now`; marks edges on the epoll registrations
    /// of sockets whose readiness may have changed.
    pub fn advance(&mut self, now: u64) {
        let due = self.net.next_event_time().is_some_and(|t| t <= now);
        let changes = self.net.advance(now);
        if due || !changes.is_empty() {
            self.changed();
        }
        for change in changes {
            if let Some(&vs) = self.by_net.get(&change.socket) {
                self.mark_edges(|r| r == vs);
            }
        }
    }

    /// EPOLL_CTL_ADD/MOD/DEL of a virtual socket or pipe end. Returns an
    /// errno on error.
    pub fn epoll_ctl(
        &mut self,
        key: (i32, i32),
        op: i32,
        fd: i32,
        vs: VsId,
        events: u32,
        data: u64,
    ) -> Result<(), i32> {
        self.changed();
        let regs = self.epolls.entry(key).or_default();
        let at = regs.iter().position(|r| r.fd == fd);
        // A new or modified registration reports the current readiness once.
        let fresh = EpollReg {
            fd,
            vs,
            events,
            data,
            edge: true,
            disabled: false,
        };
        match (op, at) {
            (libc::EPOLL_CTL_ADD, None) => {
                regs.push(fresh);
                Ok(())
            }
            (libc::EPOLL_CTL_ADD, Some(_)) => Err(libc::EEXIST),
            (libc::EPOLL_CTL_MOD, Some(i)) => {
                regs[i] = fresh;
                Ok(())
            }
            (libc::EPOLL_CTL_DEL, Some(i)) => {
                regs.remove(i);
                Ok(())
            }
            (libc::EPOLL_CTL_MOD | libc::EPOLL_CTL_DEL, None) => Err(libc::ENOENT),
            _ => Err(libc::EINVAL),
        }
    }

    /// The virtual sockets and pipe ends of an epoll instance that are ready, as
    /// (events, data) pairs, at most `max`. With `consume`, edge-triggered
    /// and one-shot registrations are marked reported.
    pub fn epoll_ready(&mut self, key: (i32, i32), max: usize, consume: bool) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        let Some(regs) = self.epolls.get(&key) else {
            return out;
        };
        let ready: Vec<(usize, u32)> = self.ready_regs(regs).take(max).collect();
        if consume && !ready.is_empty() {
            self.changed();
        }
        let regs = self.epolls.get_mut(&key).expect("checked above");
        for (i, ev) in ready {
            let r = &mut regs[i];
            out.push((ev, r.data));
            if consume {
                r.edge = false;
                if r.events & EPOLLONESHOT != 0 {
                    r.disabled = true;
                }
            }
        }
        out
    }

    /// Whether an epoll_wait on the instance would report a virtual socket
    /// now (what [`NetState::epoll_ready`] would find, without taking it).
    pub fn epoll_any_ready(&self, key: (i32, i32)) -> bool {
        self.epolls
            .get(&key)
            .is_some_and(|regs| self.ready_regs(regs).next().is_some())
    }

    /// The registrations of `regs` that would be reported now, as (index,
    /// events) pairs.
    fn ready_regs<'a>(&'a self, regs: &'a [EpollReg]) -> impl Iterator<Item = (usize, u32)> + 'a {
        regs.iter()
            .enumerate()
            .filter(|(_, r)| !r.disabled && (r.events & EPOLLET == 0 || r.edge))
            .filter_map(|(i, r)| {
                let mask =
                    r.events & (EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLRDHUP) | EPOLLERR | EPOLLHUP;
                let ev = event_bits(self.readiness(r.vs)) & mask;
                (ev != 0).then_some((i, ev))
            })
    }

    /// Whether an epoll instance has any virtual registrations.
    pub fn has_epoll(&self, key: (i32, i32)) -> bool {
        self.epolls.get(&key).is_some_and(|r| !r.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dup of an epoll descriptor shares its registrations, and they
    /// survive the original's close.
    #[test]
    fn epoll_dups_share_registrations() {
        let dir = std::env::temp_dir().join(format!("faultline-netstate-{}", std::process::id()));
        let mut ns =
            NetState::new(1, vnet::NetConfig::default(), &["a".into()], &dir).expect("net state");
        ns.epoll_ctl((10, 6), libc::EPOLL_CTL_ADD, 7, 3, EPOLLIN, 42)
            .expect("add");
        assert_eq!(ns.epoll_fds(10), vec![6]);
        ns.alias_epoll((10, 4), (10, 6));
        assert!(ns.knows_epoll((10, 4)));
        assert_eq!(ns.epoll_key((10, 4)), (10, 6));
        ns.drop_epoll(10, 6);
        assert!(ns.has_epoll((10, 4)), "the dup keeps the instance");
        assert_eq!(ns.epoll_key((10, 4)), (10, 4));
        ns.drop_epoll(10, 4);
        assert!(!ns.knows_epoll((10, 4)));
        let _ = std::fs::remove_dir_all(dir);
    }
}
