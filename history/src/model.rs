//! The key-value register model: one key's operations as state transitions.
//!
//! Values are interned per key so a state is a small integer and the
//! search can memoize (linearized set, state) pairs cheaply.

use std::collections::{HashMap, HashSet};

use crate::op::{Action, Operation, Outcome};

/// An interned value of one key; [`ABSENT`] is "no value".
pub(crate) type Value = u32;

/// The state of a key that was never written or was deleted.
pub(crate) const ABSENT: Value = 0;

/// What an operation does to its key's register when it is linearized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Effect {
    /// put (or delete, which writes [`ABSENT`]).
    Write(Value),
    /// An acknowledged get: only legal if the register holds the value.
    Read(Value),
    /// cas: only legal if the register holds `expect`; then writes `new`.
    Swap {
        /// The value the register must hold.
        expect: Value,
        /// The value written.
        new: Value,
    },
}

impl Effect {
    /// The register after the operation, or `None` if the operation could
    /// not have taken effect (and returned what it did) in `state`.
    pub(crate) fn apply(self, state: Value) -> Option<Value> {
        match self {
            Effect::Write(v) => Some(v),
            Effect::Read(v) => (v == state).then_some(state),
            Effect::Swap { expect, new } => (expect == state).then_some(new),
        }
    }

    /// The value this effect leaves in the register, if it writes one.
    pub(crate) fn written(self) -> Option<Value> {
        match self {
            Effect::Write(v) | Effect::Swap { new: v, .. } => Some(v),
            Effect::Read(_) => None,
        }
    }
}

/// One operation as the search sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    /// Index of the operation in the checked history.
    pub(crate) index: usize,
    /// Its effect on the register.
    pub(crate) effect: Effect,
    /// Invoke time (ns).
    pub(crate) invoke: u64,
    /// Completion time (ns); `None` = the outcome is unknown, so it may take
    /// effect at any time after invoke, or never.
    pub(crate) complete: Option<u64>,
    /// For an operation of unknown outcome: an earlier-invoked one with the
    /// same effect, which must be linearized first (see [`order_twins`]).
    pub(crate) after: Option<usize>,
}

impl Candidate {
    /// Real-time order: `self` returned before `other` was invoked, so every
    /// linearization puts `self` first. Equal times count as concurrent.
    pub(crate) fn precedes(&self, other: &Candidate) -> bool {
        self.complete.is_some_and(|c| c < other.invoke)
    }
}

/// The sub-history of one key, ready for the search.
#[derive(Debug)]
pub(crate) struct KeyHistory<'a> {
    /// The key.
    pub(crate) key: &'a str,
    /// Its operations that can matter: failed operations, gets of unknown
    /// outcome and writes of unknown outcome whose value nobody observed
    /// are left out (see [`without_unobserved_unknown_writes`]).
    pub(crate) ops: Vec<Candidate>,
    /// Interned values: `values[v - 1]` is the text of value `v`.
    values: Vec<&'a str>,
}

impl<'a> KeyHistory<'a> {
    /// Builds the sub-history of `key` from the given operations of the
    /// history (`indices` into `history`, all on `key`).
    pub(crate) fn new(key: &'a str, history: &'a [Operation], indices: &[usize]) -> Self {
        let mut interner = Interner::default();
        let mut ops = indices
            .iter()
            .filter_map(|&index| {
                let op = &history[index];
                let effect = match (&op.action, op.outcome) {
                    (_, Outcome::Fail) | (Action::Get(_), Outcome::Unknown) => return None,
                    (Action::Put(v), _) => Effect::Write(interner.intern(Some(v))),
                    (Action::Delete, _) => Effect::Write(ABSENT),
                    (Action::Get(v), _) => Effect::Read(interner.intern(v.as_deref())),
                    (Action::Cas { expect, new }, _) => Effect::Swap {
                        expect: interner.intern(expect.as_deref()),
                        new: interner.intern(Some(new)),
                    },
                };
                let complete = match op.outcome {
                    Outcome::Ok => op.complete,
                    Outcome::Unknown | Outcome::Fail => None,
                };
                Some(Candidate {
                    index,
                    effect,
                    invoke: op.invoke,
                    complete,
                    after: None,
                })
            })
            .collect();
        ops = without_unobserved_unknown_writes(ops);
        order_twins(&mut ops);
        KeyHistory {
            key,
            ops,
            values: interner.values,
        }
    }

    /// The text of an interned value (`None` = absent).
    pub(crate) fn text(&self, value: Value) -> Option<&'a str> {
        value.checked_sub(1).map(|i| self.values[i as usize])
    }
}

/// Drops writes of unknown outcome whose value no operation reads or
/// expects. Such a write never helps: right after it the key holds a value
/// that only another write can follow, so leaving it out of a linearization
/// keeps the linearization valid. Keeping it would let the search place it
/// at every later point, which multiplies the states on a key with many
/// timed-out writes (a crash-heavy run) without changing the answer.
fn without_unobserved_unknown_writes(ops: Vec<Candidate>) -> Vec<Candidate> {
    let observed: HashSet<Value> = ops
        .iter()
        .filter_map(|c| match c.effect {
            Effect::Read(v) | Effect::Swap { expect: v, .. } => Some(v),
            Effect::Write(_) => None,
        })
        .collect();
    ops.into_iter()
        .filter(|c| {
            c.complete.is_some() || c.effect.written().is_none_or(|v| observed.contains(&v))
        })
        .collect()
}

/// Links each operation of unknown outcome to the previous one (by invoke
/// time) with the same effect. Such twins are interchangeable, except that
/// the earlier one may take effect earlier, so any linearization can use the
/// earlier one first; insisting on that keeps the search from telling
/// apart "which of the 20 timed-out deletes happened", which would
/// otherwise double the states with each of them.
fn order_twins(ops: &mut [Candidate]) {
    let mut unknown: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].complete.is_none())
        .collect();
    unknown.sort_by_key(|&i| (ops[i].invoke, i));
    let mut last: HashMap<Effect, usize> = HashMap::new();
    for i in unknown {
        ops[i].after = last.insert(ops[i].effect, i);
    }
}

/// Assigns each distinct value of a key a small number.
#[derive(Default)]
struct Interner<'a> {
    ids: HashMap<&'a str, Value>,
    values: Vec<&'a str>,
}

impl<'a> Interner<'a> {
    fn intern(&mut self, value: Option<&'a str>) -> Value {
        let Some(text) = value else { return ABSENT };
        *self.ids.entry(text).or_insert_with(|| {
            self.values.push(text);
            Value::try_from(self.values.len()).expect("fewer than 2^32 values per key")
        })
    }
}
