//! Wing–Gong linearizability search with Lowe's memoization, for one key.
//!
//! The operations' call and return events sit in time order in a doubly
//! linked list. Walking it from the front, a call is an operation that may
//! be linearized next: if the register allows it, it is taken out of the
//! list (call and return) and the walk restarts. Reaching a return means an
//! operation that had to happen by then could not be placed: undo the last
//! choice and try the next call after it. Lowe's improvement remembers every
//! (set of linearized operations, register state) reached; reaching one
//! again cannot lead anywhere new, which turns the exponential search into
//! one that is linear for typical histories. Operations of unknown outcome
//! have no return event, so they are placed only where they help.

use std::collections::HashSet;

use crate::model::{KeyHistory, Value, ABSENT};

/// How many distinct register values of the stuck point to remember.
const MAX_STUCK_STATES: usize = 8;

/// What the search concluded for one key.
#[derive(Debug)]
pub(crate) enum SearchResult {
    /// Some order of the operations explains every result.
    Linearizable,
    /// No order does; the furthest the search got.
    Stuck(Stuck),
    /// The budget of distinct states ran out first.
    GaveUp,
}

/// The furthest point of a failed search: operation `op` (an index into
/// [`KeyHistory::ops`]) had to be placed by its completion, and in every
/// order of the operations before it the register held one of `states`,
/// none of which lets `op` take effect or return what it did.
#[derive(Debug)]
pub(crate) struct Stuck {
    /// The operation that could not be placed.
    pub(crate) op: usize,
    /// Register values it met (at most [`MAX_STUCK_STATES`]).
    pub(crate) states: Vec<Value>,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Head,
    Call(usize),
    Return(usize),
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    event: Event,
    prev: usize,
    next: usize,
}

/// The event list: entry 0 is the head; the list is circular through it.
struct Events {
    entries: Vec<Entry>,
    call_of: Vec<usize>,
    return_of: Vec<Option<usize>>,
}

const HEAD: usize = 0;

impl Events {
    fn new(history: &KeyHistory) -> Self {
        // (time, is_return, op): at equal times calls sort first, so the
        // operations overlap.
        let mut timed: Vec<(u64, bool, usize)> = Vec::new();
        for (i, op) in history.ops.iter().enumerate() {
            timed.push((op.invoke, false, i));
            if let Some(complete) = op.complete {
                timed.push((complete, true, i));
            }
        }
        timed.sort_unstable();
        let n = timed.len();
        let mut entries = vec![Entry {
            event: Event::Head,
            prev: n,
            next: if n == 0 { HEAD } else { 1 },
        }];
        let mut call_of = vec![0; history.ops.len()];
        let mut return_of = vec![None; history.ops.len()];
        for (k, &(_, is_return, op)) in timed.iter().enumerate() {
            let at = k + 1;
            let event = if is_return {
                return_of[op] = Some(at);
                Event::Return(op)
            } else {
                call_of[op] = at;
                Event::Call(op)
            };
            entries.push(Entry {
                event,
                prev: k,
                next: if at == n { HEAD } else { at + 1 },
            });
        }
        Events {
            entries,
            call_of,
            return_of,
        }
    }

    fn unlink(&mut self, at: usize) {
        let Entry { prev, next, .. } = self.entries[at];
        self.entries[prev].next = next;
        self.entries[next].prev = prev;
    }

    fn relink(&mut self, at: usize) {
        let Entry { prev, next, .. } = self.entries[at];
        self.entries[prev].next = at;
        self.entries[next].prev = at;
    }

    /// Takes a linearized operation out of the list.
    fn lift(&mut self, op: usize) {
        self.unlink(self.call_of[op]);
        if let Some(ret) = self.return_of[op] {
            self.unlink(ret);
        }
    }

    /// Undoes the most recent [`Events::lift`] (dancing-links order).
    fn unlift(&mut self, op: usize) {
        if let Some(ret) = self.return_of[op] {
            self.relink(ret);
        }
        self.relink(self.call_of[op]);
    }
}

/// A set of linearized operations with an incrementally kept hash, so
/// remembering a configuration costs a copy of the bits but no rehashing
/// of them (equality still compares every bit: no false sharing).
#[derive(Clone, PartialEq, Eq)]
struct OpSet {
    hash: u64,
    bits: Box<[u64]>,
}

impl std::hash::Hash for OpSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl OpSet {
    fn new(len: usize) -> Self {
        OpSet {
            hash: 0,
            bits: vec![0; len.div_ceil(64)].into_boxed_slice(),
        }
    }

    fn contains(&self, op: usize) -> bool {
        self.bits[op / 64] & (1 << (op % 64)) != 0
    }

    /// Adds or removes `op`.
    fn toggle(&mut self, op: usize) {
        self.bits[op / 64] ^= 1 << (op % 64);
        self.hash ^= mix(op as u64);
    }
}

/// splitmix64's finalizer: a well-spread 64-bit value per operation.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Searches for a linearization of one key's operations, visiting at most
/// `max_states` distinct (linearized set, state) configurations.
pub(crate) fn search(history: &KeyHistory, max_states: usize) -> SearchResult {
    let mut events = Events::new(history);
    let mut linearized = OpSet::new(history.ops.len());
    let mut seen: HashSet<(OpSet, Value)> = HashSet::new();
    let mut stack: Vec<(usize, Value)> = Vec::new();
    let mut pending = history.ops.iter().filter(|o| o.complete.is_some()).count();
    let mut state = ABSENT;
    let mut furthest: Option<(usize, Stuck)> = None;
    let mut cursor = events.entries[HEAD].next;
    loop {
        if pending == 0 {
            return SearchResult::Linearizable;
        }
        let entry = events.entries[cursor];
        match entry.event {
            Event::Call(op) => {
                let candidate = &history.ops[op];
                let twin_first = candidate.after.is_none_or(|t| linearized.contains(t));
                if let Some(next) = history
                    .apply(candidate.effect, state)
                    .filter(|_| twin_first)
                {
                    linearized.toggle(op);
                    if seen.insert((linearized.clone(), next)) {
                        if seen.len() > max_states {
                            return SearchResult::GaveUp;
                        }
                        stack.push((op, state));
                        state = next;
                        events.lift(op);
                        pending -= usize::from(candidate.complete.is_some());
                        cursor = events.entries[HEAD].next;
                        continue;
                    }
                    linearized.toggle(op);
                }
                cursor = entry.next;
            }
            Event::Return(op) => {
                note_stuck(&mut furthest, cursor, op, state);
                let Some((last, before)) = stack.pop() else {
                    let (_, stuck) = furthest.expect("just noted");
                    return SearchResult::Stuck(stuck);
                };
                linearized.toggle(last);
                state = before;
                events.unlift(last);
                pending += usize::from(history.ops[last].complete.is_some());
                cursor = events.entries[events.call_of[last]].next;
            }
            // While an acknowledged operation is unplaced its return is
            // still ahead of the cursor, so the walk never wraps around.
            Event::Head => unreachable!("pending operations left but no return ahead"),
        }
    }
}

/// Remembers the return event furthest in time at which the search was
/// stuck, and the states it was stuck in there.
fn note_stuck(furthest: &mut Option<(usize, Stuck)>, at: usize, op: usize, state: Value) {
    match furthest {
        Some((best, stuck)) if *best == at => {
            if stuck.states.len() < MAX_STUCK_STATES && !stuck.states.contains(&state) {
                stuck.states.push(state);
            }
        }
        Some((best, _)) if *best > at => {}
        _ => {
            *furthest = Some((
                at,
                Stuck {
                    op,
                    states: vec![state],
                },
            ))
        }
    }
}
