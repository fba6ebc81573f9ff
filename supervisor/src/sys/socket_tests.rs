//! Tests of the virtual socket handlers on a one-host world.

use super::super::testing::{call, parked, returned, world, zeroed, PID};
use super::super::Action;
use super::WANT_READ;
use crate::sim::memory::{FakeMemory, Memory};
use crate::sim::netstate::VsId;
use crate::sim::state::Sim;
use crate::sim::vclock::NS;
use crate::sim::world::{ExitHook, Resume, WaitKind};

const BUF: u64 = 0x1000;
const ADDR: u64 = 0x2000;
const LEN: u64 = 0x2100;

fn memory() -> FakeMemory {
    let mem = zeroed(BUF, 0x1000);
    mem.map(ADDR, &[0; 0x200]);
    mem
}

/// A `struct sockaddr_in` of the test host's address and `port`.
fn sockaddr(sim: &Sim, port: u16) -> Vec<u8> {
    let host = sim.procs[&PID].host;
    let mut sa = (libc::AF_INET as u16).to_ne_bytes().to_vec();
    sa.extend_from_slice(&port.to_be_bytes());
    sa.extend_from_slice(&sim.net.net().host_addr(host).octets());
    sa.extend_from_slice(&[0; 8]);
    sa
}

/// socket(AF_INET, `ty`) as descriptor `fd`, as its exit binds it.
fn socket(sim: &mut Sim, fd: i64, ty: i32) -> VsId {
    let c = call(
        libc::SYS_socket,
        [libc::AF_INET as u64, ty as u64, 0, 0, 0, 0],
        memory(),
    );
    let Action::Now(Resume::PassThenExit(Some(regs), ExitHook::NewSocket(opened))) =
        sim.sys_socket_inet(&c, vnet::Domain::Inet)
    else {
        panic!("not rewritten to eventfd2");
    };
    let nonblocking = ty & libc::SOCK_NONBLOCK != 0;
    assert_eq!(
        (regs.orig_rax, regs.rsi != 0),
        (libc::SYS_eventfd2 as u64, nonblocking)
    );
    sim.placeholder_opened(PID, fd, &opened);
    sim.simulated_fd(PID, fd as i32).expect("bound")
}

/// Socket call `nr` on descriptor `fd` with the other arguments `rest`.
fn on(sim: &mut Sim, fd: u64, nr: i64, rest: [u64; 5], mem: FakeMemory) -> (Action, FakeMemory) {
    let [b, c_, d, e, f] = rest;
    let c = call(nr, [fd, b, c_, d, e, f], mem);
    let vs = sim.simulated_fd(PID, fd as i32).expect("a socket");
    let action = sim.sys_vsock(&c, vs, &mut vec![]);
    (action, c.mem)
}

#[test]
fn only_tcp_and_udp_sockets_are_made() {
    let mut sim = world();
    let raw = [libc::AF_INET as u64, libc::SOCK_RAW as u64, 0, 0, 0, 0];
    let c = call(libc::SYS_socket, raw, memory());
    let action = sim.sys_socket_inet(&c, vnet::Domain::Inet);
    assert_eq!(returned(action), -(libc::EPROTONOSUPPORT as i64));
    socket(&mut sim, 3, libc::SOCK_STREAM | libc::SOCK_NONBLOCK);
}

#[test]
fn a_datagram_arrives_once_the_network_delivers_it() {
    let mut sim = world();
    socket(&mut sim, 3, libc::SOCK_DGRAM);
    let receiver = socket(&mut sim, 4, libc::SOCK_DGRAM);
    let mem = memory();
    mem.write_mem(ADDR, &sockaddr(&sim, 9000)).unwrap();
    assert_eq!(
        returned(on(&mut sim, 4, libc::SYS_bind, [ADDR, 16, 0, 0, 0], mem).0),
        0
    );
    let mem = memory();
    mem.write_mem(BUF, b"ping").unwrap();
    mem.write_mem(ADDR, &sockaddr(&sim, 9000)).unwrap();
    let send = on(&mut sim, 3, libc::SYS_sendto, [BUF, 4, 0, ADDR, 16], mem).0;
    assert_eq!(returned(send), 4);
    // Not delivered yet: a blocking read parks on the socket.
    let recv = [BUF, 64, 0, ADDR, LEN];
    let w = parked(on(&mut sim, 4, libc::SYS_recvfrom, recv, memory()).0);
    assert!(matches!(&w.kind, WaitKind::Net { virt, .. } if virt == &[(receiver, WANT_READ)]));
    sim.clock.advance_to(NS);
    sim.net.advance(NS);
    let mem = memory();
    mem.write_val(LEN, &16u32).unwrap();
    let (action, mem) = on(&mut sim, 4, libc::SYS_recvfrom, recv, mem);
    assert_eq!(returned(action), 4);
    let mut got = [0u8; 4];
    mem.read_mem(BUF, &mut got).unwrap();
    assert_eq!(&got, b"ping");
    assert_eq!(
        mem.read_val::<u16>(ADDR).unwrap(),
        libc::AF_INET as u16,
        "sender's address"
    );
}

#[test]
fn a_receive_timeout_bounds_the_wait_and_fionbio_makes_it_fail_at_once() {
    let mut sim = world();
    socket(&mut sim, 3, libc::SOCK_DGRAM);
    let mem = memory();
    mem.write_val(BUF, &[1i64, 500_000]).unwrap();
    let opt = [
        libc::SOL_SOCKET as u64,
        libc::SO_RCVTIMEO as u64,
        BUF,
        16,
        0,
    ];
    assert_eq!(
        returned(on(&mut sim, 3, libc::SYS_setsockopt, opt, mem).0),
        0
    );
    let read = [BUF, 64, 0, 0, 0];
    let w = parked(on(&mut sim, 3, libc::SYS_read, read, memory()).0);
    assert_eq!(w.deadline, Some(NS + NS / 2));
    assert!(matches!(w.on_timeout, Resume::Restart));
    let mem = memory();
    mem.write_val(BUF, &1i32).unwrap();
    assert_eq!(
        returned(on(&mut sim, 3, libc::SYS_ioctl, [0x5421, BUF, 0, 0, 0], mem).0),
        0
    );
    let eagain = -(libc::EAGAIN as i64);
    assert_eq!(
        returned(on(&mut sim, 3, libc::SYS_read, read, memory()).0),
        eagain
    );
}

/// A TCP socket on descriptor 3 listening on port 7000; its id.
fn listening(sim: &mut Sim) -> VsId {
    let listener = socket(sim, 3, libc::SOCK_STREAM);
    let mem = memory();
    mem.write_mem(ADDR, &sockaddr(sim, 7000)).unwrap();
    assert_eq!(
        returned(on(sim, 3, libc::SYS_bind, [ADDR, 16, 0, 0, 0], mem).0),
        0
    );
    assert_eq!(
        returned(on(sim, 3, libc::SYS_listen, [16, 0, 0, 0, 0], memory()).0),
        0
    );
    listener
}

/// Descriptor 4 connects to the listener on port 7000, and a second
/// passes: the connection waits to be accepted.
fn connected(sim: &mut Sim) {
    socket(sim, 4, libc::SOCK_STREAM | libc::SOCK_NONBLOCK);
    let mem = memory();
    mem.write_mem(ADDR, &sockaddr(sim, 7000)).unwrap();
    let connect = on(sim, 4, libc::SYS_connect, [ADDR, 16, 0, 0, 0], mem).0;
    assert_eq!(returned(connect), -(libc::EINPROGRESS as i64));
    let now = sim.clock.now() + NS;
    sim.clock.advance_to(now);
    sim.net.advance(now);
}

#[test]
fn a_connection_is_accepted_into_a_new_placeholder_with_the_peers_address() {
    let mut sim = world();
    let listener = listening(&mut sim);
    let accept = [ADDR, LEN, 0, 0, 0];
    let w = parked(on(&mut sim, 3, libc::SYS_accept, accept, memory()).0);
    assert!(matches!(&w.kind, WaitKind::Net { virt, .. } if virt == &[(listener, WANT_READ)]));
    connected(&mut sim);
    let mem = memory();
    mem.write_val(LEN, &16u32).unwrap();
    let (action, mem) = on(&mut sim, 3, libc::SYS_accept, accept, mem);
    let Action::Now(Resume::PassThenExit(_, ExitHook::NewSocket(opened))) = action else {
        panic!("no connection to accept");
    };
    sim.placeholder_opened(PID, 5, &opened);
    assert!(sim.simulated_fd(PID, 5).is_some());
    assert_eq!(
        mem.read_val::<u16>(ADDR).unwrap(),
        libc::AF_INET as u16,
        "peer written"
    );
}

#[test]
fn an_accept_into_a_bad_address_fails_and_drops_the_connection() {
    // As the kernel: the connection is taken from the queue, its address
    // cannot be written, so the new socket is closed (its peer reads end
    // of file) and the call fails with EFAULT.
    let mut sim = world();
    listening(&mut sim);
    connected(&mut sim);
    let mem = memory();
    mem.write_val(LEN, &16u32).unwrap();
    let unmapped = 0x9000;
    let (action, _) = on(&mut sim, 3, libc::SYS_accept, [unmapped, LEN, 0, 0, 0], mem);
    assert_eq!(returned(action), -(libc::EFAULT as i64));
    let later = sim.clock.now() + NS;
    sim.clock.advance_to(later);
    sim.net.advance(later);
    let read = on(&mut sim, 4, libc::SYS_read, [BUF, 64, 0, 0, 0], memory()).0;
    assert_eq!(returned(read), 0, "the peer reads end of file");
    // Nothing is left to accept: a blocking listener waits.
    parked(
        on(
            &mut sim,
            3,
            libc::SYS_accept,
            [ADDR, LEN, 0, 0, 0],
            memory(),
        )
        .0,
    );
}
