//! Tests of the readiness handlers on a one-host world: virtual sockets
//! answered by the simulated network, the other descriptors by a fake host.

use super::super::testing::{call, parked, returned, world, zeroed, FakeHost, PID, VTID};
use super::super::Action;
use crate::sim::host_probe::HostProbe;
use crate::sim::memory::{FakeMemory, Memory};
use crate::sim::state::Sim;
use crate::sim::vclock::{Timespec, NS};
use crate::sim::world::{ExitHook, Resume, ThreadState, Wait, WaitKind};

const FDS: u64 = 0x1000;
const BUF: u64 = 0x2000;
const SPEC: u64 = 0x3000;
/// The caller's stack pointer (zero-timeout passes write below it).
const STACK: u64 = 0x5000;

/// Memory with the poll array, a buffer, a timespec and a stack.
fn memory() -> FakeMemory {
    let mem = zeroed(FDS, 0x100);
    mem.map(BUF, &[0; 0x200]);
    mem.map(SPEC, &[0; 0x10]);
    mem.map(STACK - 0x1000, &[0; 0x1000]);
    mem
}

/// A UDP socket as descriptor `fd`, as its exit binds it.
fn udp(sim: &mut Sim, fd: i64) {
    let ty = libc::SOCK_DGRAM as u64;
    let c = call(
        libc::SYS_socket,
        [libc::AF_INET as u64, ty, 0, 0, 0, 0],
        memory(),
    );
    let Action::Now(Resume::PassThenExit(_, ExitHook::NewSocket(opened))) =
        sim.sys_socket_inet(&c, vnet::Domain::Inet)
    else {
        panic!("no socket");
    };
    sim.placeholder_opened(PID, fd, &opened);
}

/// Socket call `nr` on descriptor `fd` with arguments `rest`, on `mem`.
fn on(sim: &mut Sim, fd: u64, nr: i64, rest: [u64; 5], mem: FakeMemory) -> Action {
    let [b, c_, d, e, f] = rest;
    let c = call(nr, [fd, b, c_, d, e, f], mem);
    let vs = sim.simulated_fd(PID, fd as i32).expect("a socket");
    sim.sys_vsock(&c, vs, &mut vec![])
}

/// Descriptor 4, a UDP socket bound to port 9000, with a datagram on its
/// way from descriptor 3 (delivered once the network advances).
fn datagram_on_its_way(sim: &mut Sim) {
    udp(sim, 3);
    udp(sim, 4);
    let host = sim.procs[&PID].host;
    let mut sa = (libc::AF_INET as u16).to_ne_bytes().to_vec();
    sa.extend_from_slice(&9000u16.to_be_bytes());
    sa.extend_from_slice(&sim.net.net().host_addr(host).octets());
    sa.extend_from_slice(&[0; 8]);
    let mem = memory();
    mem.write_mem(BUF, &sa).unwrap();
    assert_eq!(
        returned(on(sim, 4, libc::SYS_bind, [BUF, 16, 0, 0, 0], mem)),
        0
    );
    let mem = memory();
    mem.write_mem(BUF, &sa).unwrap();
    mem.write_mem(BUF + 0x100, b"ping").unwrap();
    let send = [BUF + 0x100, 4, 0, BUF, 16];
    assert_eq!(returned(on(sim, 3, libc::SYS_sendto, send, mem)), 4);
}

/// Lets the network deliver what is on its way.
fn deliver(sim: &mut Sim) {
    sim.clock.advance_to(NS);
    sim.net.advance(NS);
}

/// poll(fds, n, timeout_ms) with `entries` (fd, events) in the array.
fn poll(sim: &mut Sim, host: &FakeHost, entries: &[(i32, i16)], ms: i32) -> (Action, FakeMemory) {
    let mem = memory();
    for (i, &(fd, ev)) in entries.iter().enumerate() {
        mem.write_val(FDS + 8 * i as u64, &[fd, ev as i32]).unwrap();
    }
    let mut c = call(
        libc::SYS_poll,
        [FDS, entries.len() as u64, ms as u64, 0, 0, 0],
        mem,
    );
    c.regs.rsp = STACK;
    c.regs.rdx = ms as u64;
    let action = sim.sys_poll(&c, host, &mut vec![]);
    (action, c.mem)
}

#[test]
fn poll_on_a_virtual_socket_parks_until_its_datagram_arrives_then_is_ready() {
    let mut sim = world();
    let host = FakeHost::default();
    datagram_on_its_way(&mut sim);
    let now = sim.clock.now();
    let w = parked(poll(&mut sim, &host, &[(4, libc::POLLIN)], 100).0);
    assert_eq!(w.deadline, Some(now + 100_000_000));
    assert!(
        matches!(&w.kind, WaitKind::Net { virt, real, .. } if virt.len() == 1 && real.is_empty())
    );
    deliver(&mut sim);
    let (action, mem) = poll(&mut sim, &host, &[(4, libc::POLLIN)], 100);
    assert_eq!(returned(action), 1);
    let revents: i16 = mem.read_val(FDS + 6).unwrap();
    assert_eq!(revents & libc::POLLIN, libc::POLLIN);
}

#[test]
fn a_ready_host_descriptor_is_polled_by_the_kernel_with_a_zero_timeout() {
    let mut sim = world();
    let host = FakeHost::default().pollable(7, libc::POLLIN);
    let Action::Now(Resume::PassThenExit(Some(regs), ExitHook::RestoreArgs(saved))) =
        poll(&mut sim, &host, &[(7, libc::POLLIN)], 5000).0
    else {
        panic!("not passed with a zero timeout");
    };
    assert_eq!((regs.rdx, saved.rdx), (0, 5000));
    // Not ready, no timeout: parked on the descriptor, with no deadline.
    let host = FakeHost::default().pollable(7, 0);
    let w = parked(poll(&mut sim, &host, &[(7, libc::POLLIN)], -1).0);
    assert_eq!(w.deadline, None);
    assert!(matches!(&w.kind, WaitKind::Net { real, .. } if real == &[(7, libc::POLLIN)]));
}

#[test]
fn a_re_executed_poll_keeps_the_deadline_of_its_first_execution() {
    let mut sim = world();
    let host = FakeHost::default().pollable(7, 0);
    sim.threads.get_mut(&VTID).unwrap().restart_deadline = Some(42);
    let w = parked(poll(&mut sim, &host, &[(7, libc::POLLIN)], 100).0);
    assert_eq!(w.deadline, Some(42));
    assert_eq!(sim.threads[&VTID].restart_deadline, None, "used once");
}

#[test]
fn select_marks_the_ready_socket_in_the_read_set() {
    let mut sim = world();
    let host = FakeHost::default();
    datagram_on_its_way(&mut sim);
    deliver(&mut sim);
    let mem = memory();
    mem.write_val(FDS, &((1u64 << 4) | (1 << 3))).unwrap();
    let c = call(libc::SYS_select, [5, FDS, 0, 0, 0, 0], mem);
    assert_eq!(returned(sim.sys_poll(&c, &host, &mut vec![])), 1);
    assert_eq!(c.mem.read_val::<u64>(FDS).unwrap(), 1 << 4);
}

/// epoll_wait(9, BUF, 8, ms).
fn epoll_wait(sim: &mut Sim, host: &FakeHost, ms: i32) -> (Action, FakeMemory) {
    let c = call(libc::SYS_epoll_wait, [9, BUF, 8, ms as u64, 0, 0], memory());
    let action = sim.sys_epoll_wait(&c, host, &mut vec![]);
    (action, c.mem)
}

#[test]
fn epoll_wait_with_a_timeout_parks_on_the_instance_until_its_deadline() {
    let mut sim = world();
    let host = FakeHost::default().pollable(9, 0);
    let now = sim.clock.now();
    let w = parked(epoll_wait(&mut sim, &host, 250).0);
    assert_eq!(w.deadline, Some(now + 250_000_000));
    assert!(matches!(w.on_timeout, Resume::Restart));
    assert!(matches!(
        &w.kind,
        WaitKind::Net {
            epoll: Some((PID, 9)),
            ..
        }
    ));
    let ts = Timespec { sec: 2, nsec: 0 };
    let mem = memory();
    mem.write_val(SPEC, &ts).unwrap();
    let c = call(libc::SYS_epoll_pwait2, [9, BUF, 8, SPEC, 0, 0], mem);
    let w = parked(sim.sys_epoll_wait(&c, &host, &mut vec![]));
    assert_eq!(w.deadline, Some(now + 2 * NS));
}

#[test]
fn a_socket_registered_through_a_dup_of_the_epoll_descriptor_is_waited_on() {
    let mut sim = world();
    // 10 is a dup of 9, which the program registered a socket on first.
    let host = FakeHost::default().pollable(9, 0).dup(9, 10);
    datagram_on_its_way(&mut sim);
    let register = |sim: &mut Sim, epfd: u64, fd: u64, data: u64| {
        let mem = memory();
        let mut ev = (libc::EPOLLIN as u32).to_ne_bytes().to_vec();
        ev.extend_from_slice(&data.to_ne_bytes());
        mem.write_mem(BUF, &ev).unwrap();
        let add = libc::EPOLL_CTL_ADD as u64;
        let c = call(libc::SYS_epoll_ctl, [epfd, add, fd, BUF, 0, 0], mem);
        returned(sim.sys_epoll_ctl(&c, &host, &mut vec![]))
    };
    assert_eq!(register(&mut sim, 9, 3, 33), 0);
    assert_eq!(register(&mut sim, 10, 4, 44), 0);
    deliver(&mut sim);
    let (action, mem) = epoll_wait(&mut sim, &host, 0);
    assert_eq!(returned(action), 1);
    let mut event = [0u8; 12];
    mem.read_mem(BUF, &mut event).unwrap();
    assert_eq!(u64::from_ne_bytes(event[4..].try_into().unwrap()), 44);
}

/// The test thread parked reading descriptor 7 (passed once it is ready).
fn reader_parked_on_7() -> Sim {
    let mut sim = world();
    let wait = Wait {
        kind: WaitKind::Fds {
            fds: vec![(7, libc::POLLIN)],
            on_ready: Resume::Pass,
        },
        deadline: None,
        on_timeout: Resume::Pass,
        restartable: true,
    };
    sim.threads.get_mut(&VTID).unwrap().state = ThreadState::Parked(wait);
    sim
}

#[test]
fn the_wake_scans_wake_a_reader_whose_descriptor_became_ready() {
    let mut sim = reader_parked_on_7();
    sim.wake_ready_fds(&FakeHost::default().pollable(7, 0), &[VTID]);
    assert!(matches!(sim.threads[&VTID].state, ThreadState::Parked(_)));
    sim.wake_ready_fds(&FakeHost::default().pollable(7, libc::POLLIN), &[VTID]);
    assert!(matches!(
        sim.threads[&VTID].state,
        ThreadState::Ready(Resume::Pass)
    ));
}

#[test]
fn a_wake_scan_from_memory_stops_where_it_would_probe_the_kernel() {
    let mut sim = reader_parked_on_7();
    let host = FakeHost::default().pollable(7, libc::POLLIN);
    // Nothing remembered of descriptor 7: the scan stops before the
    // waiter, untouched, for the real probe to look at later.
    let memory = crate::sim::host_probe::MemoryOnly::new(&host);
    assert_eq!(sim.wake_ready_fds(&memory, &[VTID]), 0);
    assert!(memory.guessed());
    assert!(matches!(sim.threads[&VTID].state, ThreadState::Parked(_)));
    assert_eq!(sim.wake_ready_fds(&host, &[VTID]), 1);
    assert!(matches!(
        sim.threads[&VTID].state,
        ThreadState::Ready(Resume::Pass)
    ));
}

#[test]
fn virtual_events_go_after_the_kernels_and_count_in_the_answer() {
    let mem = zeroed(BUF, 0x100);
    let events = [(libc::EPOLLIN as u32, 44u64)];
    assert_eq!(super::append_epoll_events(&mem, 2, BUF, &events), 3);
    let mut third = [0u8; 12];
    mem.read_mem(BUF + 24, &mut third).unwrap();
    assert_eq!(u64::from_ne_bytes(third[4..].try_into().unwrap()), 44);
    let eintr = -(libc::EINTR as i64);
    assert_eq!(super::append_epoll_events(&mem, eintr, BUF, &events), eintr);
    let unmapped = BUF + 0x1000;
    assert_eq!(
        super::append_epoll_events(&mem, 0, unmapped, &events),
        0,
        "EFAULT: none added"
    );
}

/// The test thread parked on real descriptor 7 and virtual socket `fd`'s
/// readiness to read, as a poll of both parks it.
fn net_waiter_on_7_and(sim: &mut Sim, fd: i32) {
    let vs = sim.simulated_fd(PID, fd).expect("a virtual socket");
    let wait = Wait {
        kind: WaitKind::Net {
            real: vec![(7, libc::POLLIN)],
            virt: vec![(vs, libc::POLLIN as u32)],
            epoll: None,
            seen: 0,
        },
        deadline: None,
        on_timeout: Resume::Restart,
        restartable: false,
    };
    sim.threads.get_mut(&VTID).unwrap().state = ThreadState::Parked(wait);
    sim.net_parks += 1;
}

#[test]
fn a_quiet_network_wake_scan_is_skipped_until_something_it_looks_at_changes() {
    let mut sim = world();
    udp(&mut sim, 3);
    net_waiter_on_7_and(&mut sim, 3);
    let quiet = FakeHost::default().pollable(7, 0).remembering(1);
    sim.wake_net_waiters(&quiet, &[VTID]);
    assert!(matches!(sim.threads[&VTID].state, ThreadState::Parked(_)));
    // Descriptor 7 is ready now, but the host's memory says nothing could
    // have changed (its epoch is the same): the scan is skipped.
    let unchanged = FakeHost::default().pollable(7, libc::POLLIN).remembering(1);
    sim.wake_net_waiters(&unchanged, &[VTID]);
    assert!(matches!(sim.threads[&VTID].state, ThreadState::Parked(_)));
    // Once the memory may have lost an answer, the descriptor is probed.
    let changed = FakeHost::default().pollable(7, libc::POLLIN).remembering(2);
    sim.wake_net_waiters(&changed, &[VTID]);
    assert!(matches!(
        sim.threads[&VTID].state,
        ThreadState::Ready(Resume::Restart)
    ));
}

#[test]
fn a_network_change_or_a_new_wait_ends_a_quiet_scan_s_skip() {
    let mut sim = world();
    datagram_on_its_way(&mut sim);
    net_waiter_on_7_and(&mut sim, 4);
    let host = FakeHost::default().pollable(7, 0).remembering(1);
    sim.wake_net_waiters(&host, &[VTID]);
    // A thread parked anew on the network is looked at, memory or not.
    net_waiter_on_7_and(&mut sim, 4);
    let generation = sim.net.generation();
    sim.wake_net_waiters(&host, &[VTID]);
    assert!(matches!(
        &sim.threads[&VTID].state,
        ThreadState::Parked(Wait { kind: WaitKind::Net { seen, .. }, .. }) if *seen == generation
    ));
    // The datagram for socket 4 arrives: the scan looks again.
    deliver(&mut sim);
    sim.wake_net_waiters(&host, &[VTID]);
    assert!(matches!(
        sim.threads[&VTID].state,
        ThreadState::Ready(Resume::Restart)
    ));
}
