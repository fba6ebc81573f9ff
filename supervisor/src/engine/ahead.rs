//! The thread the sticky policy keeps, or the one picked before the wakes
//! that precede the next decision, answered before those wakes: the
//! supervisor's wakes overlap its run instead of delaying its answer. The
//! wakes that would need a system call wait until the thread is stopped
//! again, so nothing it does meanwhile changes what they find.

use super::*;
use crate::sim::host_probe::MemoryOnly;

/// The wakes left from a decision whose thread was let run ahead: the
/// waiters not looked at yet, whose probes need system calls, and the
/// thread whose step's cost is charged after them.
pub(crate) struct LaterWakes {
    on_fds: Vec<Vtid>,
    on_net: Vec<Vtid>,
    running: Vtid,
}

impl Supervisor {
    /// Lets the thread that ran last run on at once, before the wakes that
    /// precede the next decision, when the scheduler tells now that the
    /// decision keeps it: the common case of the sticky policy, where the
    /// supervisor's wakes then overlap the thread's run instead of
    /// delaying it. Only a thread answered over the channel with a value
    /// qualifies: its run until its next call changes nothing the wakes
    /// look at in the simulation (calls that could are trapped or posted
    /// and wait for the supervisor; what it may do to the kernel's objects
    /// meanwhile is kept out of the wakes by [`MemoryOnly`]), and nothing the
    /// wakes do can stop it from being picked (they only make parked
    /// threads runnable; faults, pauses and signals came before). Its
    /// time page shows the time after its step's cost, charged after the
    /// wakes. Returns the thread: the caller makes the wakes with
    /// [`Supervisor::wake_while_running`] and finishes its step with
    /// [`Supervisor::run_to_next_point`].
    pub(super) fn answer_ahead(&mut self) -> Option<Vtid> {
        self.channel.as_ref()?;
        let (threads, procs, paused) = (&self.sim.threads, &self.sim.procs, &self.paused);
        let senders = &self.signal_senders;
        let vtid = self.sim.sched.keeps_ahead(|v| {
            threads
                .get(&v)
                .is_some_and(|t| runs_ahead(t, procs, paused, senders))
        })?;
        self.answer_picked(vtid);
        Some(vtid)
    }

    /// The thread picked before the wakes that precede the decision
    /// ([`Supervisor::decide_before_wakes`]), answered at once if it
    /// qualifies as [`Supervisor::answer_ahead`]'s kept thread does: the
    /// wakes then overlap its run too. Returns it if it was answered.
    pub(super) fn answer_pick_ahead(&mut self, pick: Vtid) -> Option<Vtid> {
        self.channel.as_ref()?;
        let t = self.sim.threads.get(&pick)?;
        if !runs_ahead(t, &self.sim.procs, &self.paused, &self.signal_senders) {
            return None;
        }
        self.answer_picked(pick);
        Some(pick)
    }

    /// Begins the step of `vtid`, which waits on the channel, and answers
    /// it with the time after its step's cost (charged after the wakes).
    fn answer_picked(&mut self, vtid: Vtid) {
        let resume = self.begin_step(vtid);
        let req = self
            .sim
            .threads
            .get_mut(&vtid)
            .and_then(|t| t.channel_wait.take())
            .expect("an eligible thread waits on the channel");
        self.answer_request(vtid, req, resume, self.cfg.step_cost_ns);
    }

    /// The wakes before the decision that kept `vtid`, made while it runs:
    /// in order, as far as the host's memory answers them; the rest, and
    /// the step's cost, when it is stopped again
    /// ([`Supervisor::finish_later_wakes`]).
    pub(super) fn wake_while_running(&mut self, vtid: Vtid, on_fds: &[Vtid], on_net: &[Vtid]) {
        let host = MemoryOnly::new(&self.host_fds);
        let fds_done = self.sim.wake_ready_fds(&host, on_fds);
        let fds_all = fds_done == on_fds.len();
        let net_done = if fds_all {
            self.sim.wake_net_waiters(&host, on_net)
        } else {
            0
        };
        if fds_all && net_done == on_net.len() {
            self.charge_step(vtid, self.cfg.step_cost_ns);
        } else {
            self.later_wakes = Some(LaterWakes {
                on_fds: on_fds[fds_done..].to_vec(),
                on_net: on_net[net_done..].to_vec(),
                running: vtid,
            });
        }
    }

    /// Makes the wakes [`Supervisor::wake_while_running`] left, with system
    /// calls, and charges the step's cost: the thread let run ahead is
    /// stopped again (its next event came, or its step ended), so what they
    /// find comes after all it did.
    pub(super) fn finish_later_wakes(&mut self) {
        let Some(later) = self.later_wakes.take() else {
            return;
        };
        self.sim.wake_ready_fds(&self.host_fds, &later.on_fds);
        self.sim.wake_net_waiters(&self.host_fds, &later.on_net);
        self.charge_step(later.running, self.cfg.step_cost_ns);
    }

    /// Whether `event`, in the step of `vtid`, is that thread's own: a
    /// request (only the running thread posts), a notified call, or a stop
    /// of its thread.
    pub(super) fn is_own_event(
        &self,
        vtid: Vtid,
        event: &crate::fast_path::channel::Event,
    ) -> bool {
        use crate::fast_path::channel::Event;
        match event {
            Event::Request(_) | Event::Notified(_) => true,
            Event::Stop(who, _) => self.sim.threads.get(&vtid).is_some_and(|t| t.tid == *who),
        }
    }
}

/// Whether thread `t`, picked to run, may be answered before the wakes that
/// precede its pick: it waits on the channel for a value, sent no signal
/// the kernel has yet to deliver, and its node is not paused.
fn runs_ahead(
    t: &Thread,
    procs: &HashMap<i32, Process>,
    paused: &BTreeSet<vnet::HostId>,
    senders: &HashMap<i32, Vec<i32>>,
) -> bool {
    matches!(t.state, ThreadState::Ready(Resume::Return(_)))
        && t.channel_wait.is_some()
        && !senders.contains_key(&t.tid)
        && super::pause::schedulable(procs, paused, t)
}
