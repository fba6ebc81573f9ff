//! The models: one key's operations as state transitions.
//!
//! A key is a register (put, get, cas, delete) unless some operation on it
//! appends or reads a list; then it is a list (Elle's list-append, or
//! Porcupine's string-append store, where put, get and cas see the string).
//! Either way a state is a small integer, so the search can memoize
//! (linearized set, state) pairs cheaply: register values are interned per
//! key, and list states are nodes of a trie of every list the history names.

use std::collections::{HashMap, HashSet};

use crate::op::{quote, Action, Operation, Outcome, Seq};

/// An interned value of one key; [`ABSENT`] is "no value" (or the empty list).
pub(crate) type Value = u32;

/// The state of a key that was never written or was deleted (a list key:
/// the empty list).
pub(crate) const ABSENT: Value = 0;

/// A value no operation reads or expects. A register holds it after a write
/// of unknown outcome whose value nobody read, when a cas_mismatch could use
/// it; a list holds it once it is no prefix of any list the history names
/// (appending keeps it so; no read or cas can match it).
pub(crate) const OTHER: Value = Value::MAX;

/// What an operation does to its key when it is linearized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Effect {
    /// put (or delete, which writes [`ABSENT`]).
    Write(Value),
    /// An acknowledged get or read: only legal if the key holds the value.
    Read(Value),
    /// cas: only legal if the key holds `expect`; then writes `new`.
    Swap {
        /// The value the key must hold.
        expect: Value,
        /// The value written.
        new: Value,
    },
    /// A cas that found another value: only legal if the key does not hold
    /// the value; no effect.
    ReadNot(Value),
    /// An append: index into [`KeyHistory`]'s appended token sequences.
    Append(u32),
}

impl Effect {
    /// The value this effect leaves in the key, if it writes a whole one.
    pub(crate) fn written(self) -> Option<Value> {
        match self {
            Effect::Write(v) | Effect::Swap { new: v, .. } => Some(v),
            Effect::Read(_) | Effect::ReadNot(_) | Effect::Append(_) => None,
        }
    }

    /// Whether the effect can change the key.
    pub(crate) fn changes(self) -> bool {
        self.written().is_some() || matches!(self, Effect::Append(_))
    }
}

/// One operation as the search sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    /// Index of the operation in the checked history.
    pub(crate) index: usize,
    /// Its effect on the key.
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
    /// Its operations that can matter: failed operations, reads of unknown
    /// outcome and (for a register) writes of unknown outcome whose value
    /// nobody observed are left out (see [`unobserved_unknown_writes`]).
    pub(crate) ops: Vec<Candidate>,
    /// What the states are.
    space: Space<'a>,
}

/// The states of one key.
#[derive(Debug)]
enum Space<'a> {
    /// A register: `values[v - 1]` is the text of value `v`.
    Register(Vec<&'a str>),
    /// A list: trie nodes, and the token sequences the appends add.
    List {
        trie: Trie,
        appends: Vec<Vec<u32>>,
        /// Shown as strings (Porcupine's model) rather than lists.
        text: bool,
    },
}

impl<'a> KeyHistory<'a> {
    /// Builds the sub-history of `key` from the given operations of the
    /// history (`indices` into `history`, all on `key`).
    pub(crate) fn new(key: &'a str, history: &'a [Operation], indices: &[usize]) -> Self {
        let is_list = indices
            .iter()
            .any(|&i| matches!(history[i].action, Action::Append(_) | Action::Read(_)));
        let mut space = if is_list {
            let text = indices.iter().any(|&i| match &history[i].action {
                Action::Append(s) | Action::Read(s) => matches!(s, Seq::Text(_)),
                _ => true,
            });
            Space::List {
                trie: Trie::default(),
                appends: Vec::new(),
                text,
            }
        } else {
            Space::Register(Vec::new())
        };
        let mut interner = Interner::default();
        let mut ops: Vec<Candidate> = indices
            .iter()
            .filter_map(|&index| {
                let op = &history[index];
                let effect = match (&op.action, op.outcome) {
                    (_, Outcome::Fail) | (Action::Get(_) | Action::Read(_), Outcome::Unknown) => {
                        return None
                    }
                    (Action::Cas { expect, .. }, Outcome::CasMismatch) => {
                        Effect::ReadNot(space.intern(&mut interner, expect.as_deref()))
                    }
                    (Action::Put(v), _) => Effect::Write(space.intern(&mut interner, Some(v))),
                    (Action::Delete, _) => Effect::Write(ABSENT),
                    (Action::Get(v), _) => Effect::Read(space.intern(&mut interner, v.as_deref())),
                    (Action::Cas { expect, new }, _) => Effect::Swap {
                        expect: space.intern(&mut interner, expect.as_deref()),
                        new: space.intern(&mut interner, Some(new)),
                    },
                    (Action::Read(seq), _) => Effect::Read(space.intern_seq(seq)),
                    (Action::Append(seq), _) => Effect::Append(space.add_append(seq)),
                };
                let complete = match op.outcome {
                    Outcome::Ok | Outcome::CasMismatch => op.complete,
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
        if let Space::Register(values) = &mut space {
            *values = interner.values;
            ops = unobserved_unknown_writes(ops);
        }
        order_twins(&mut ops);
        KeyHistory { key, ops, space }
    }

    /// The key after `effect` in `state`, or `None` if the operation could
    /// not have taken effect (and returned what it did) in `state`.
    pub(crate) fn apply(&self, effect: Effect, state: Value) -> Option<Value> {
        match effect {
            Effect::Write(v) => Some(v),
            Effect::Read(v) => (v == state).then_some(state),
            Effect::Swap { expect, new } => (expect == state).then_some(new),
            Effect::ReadNot(v) => (v != state).then_some(state),
            Effect::Append(a) => match &self.space {
                Space::List { trie, appends, .. } => Some(trie.extend(state, &appends[a as usize])),
                Space::Register(_) => unreachable!("appends make a key a list"),
            },
        }
    }

    /// Whether the key is a register (not a list).
    pub(crate) fn is_register(&self) -> bool {
        matches!(self.space, Space::Register(_))
    }

    /// A value as shown to users: `"v1"`, `nothing`, `[1, 2]`.
    pub(crate) fn shown(&self, value: Value) -> String {
        match &self.space {
            Space::Register(_) if value == OTHER => "a value no operation read".into(),
            Space::Register(values) => quote(value.checked_sub(1).map(|i| values[i as usize])),
            Space::List { text: true, .. } if value == OTHER => "a string no operation read".into(),
            Space::List { .. } if value == OTHER => "a list no operation read".into(),
            Space::List { trie, text, .. } => {
                let tokens = trie.tokens_of(value);
                if *text {
                    quote(Some(&tokens.concat()))
                } else {
                    format!("[{}]", tokens.join(", "))
                }
            }
        }
    }
}

impl<'a> Space<'a> {
    /// The state of a register value, or of a string (a list key in
    /// Porcupine's model: absent is the empty string).
    fn intern(&mut self, interner: &mut Interner<'a>, value: Option<&'a str>) -> Value {
        match self {
            Space::Register(_) => interner.intern(value),
            Space::List { trie, .. } => {
                let tokens = Seq::Text(value.unwrap_or_default().to_string()).tokens();
                trie.insert(&tokens)
            }
        }
    }

    /// The state of a list read.
    fn intern_seq(&mut self, seq: &Seq) -> Value {
        match self {
            Space::List { trie, .. } => trie.insert(&seq.tokens()),
            Space::Register(_) => unreachable!("reads make a key a list"),
        }
    }

    /// Records what an append adds; its index.
    fn add_append(&mut self, seq: &Seq) -> u32 {
        match self {
            Space::List { trie, appends, .. } => {
                let tokens = seq.tokens().iter().map(|t| trie.token(t)).collect();
                appends.push(tokens);
                u32::try_from(appends.len() - 1).expect("fewer than 2^32 appends per key")
            }
            Space::Register(_) => unreachable!("appends make a key a list"),
        }
    }
}

/// Every list (or string) the history names, and their prefixes, as a trie:
/// node 0 is the empty list, and a list's state is its node.
#[derive(Debug, Default)]
struct Trie {
    /// Interned tokens (elements or characters).
    tokens: HashMap<String, u32>,
    /// The node one token below a node.
    children: HashMap<(Value, u32), Value>,
    /// `parents[n - 1]` = (parent node, token) of node `n`.
    parents: Vec<(Value, u32)>,
}

impl Trie {
    fn token(&mut self, text: &str) -> u32 {
        let next = u32::try_from(self.tokens.len()).expect("fewer than 2^32 tokens per key");
        *self.tokens.entry(text.to_string()).or_insert(next)
    }

    /// The node of a list, made if new.
    fn insert(&mut self, tokens: &[String]) -> Value {
        let mut node = ABSENT;
        for text in tokens {
            let token = self.token(text);
            let fresh = Value::try_from(self.parents.len() + 1)
                .ok()
                .filter(|&n| n != OTHER)
                .expect("fewer than 2^32 list states per key");
            node = *self.children.entry((node, token)).or_insert_with(|| {
                self.parents.push((node, token));
                fresh
            });
        }
        node
    }

    /// The state after appending `tokens` in `state`: [`OTHER`] once the
    /// list is no prefix of a named one.
    fn extend(&self, state: Value, tokens: &[u32]) -> Value {
        tokens
            .iter()
            .try_fold(state, |node, &token| {
                (node != OTHER)
                    .then(|| self.children.get(&(node, token)).copied())
                    .flatten()
                    .ok_or(OTHER)
            })
            .unwrap_or(OTHER)
    }

    /// The tokens of a node's list, in order.
    fn tokens_of(&self, mut node: Value) -> Vec<String> {
        let names: HashMap<u32, &str> = self.tokens.iter().map(|(t, &i)| (i, t.as_str())).collect();
        let mut out = Vec::new();
        while node != ABSENT {
            let (parent, token) = self.parents[node as usize - 1];
            out.push(names[&token].to_string());
            node = parent;
        }
        out.reverse();
        out
    }
}

/// Drops writes of unknown outcome whose value no operation reads or
/// expects. Such a write never helps: right after it the key holds a value
/// that only another write can follow, so leaving it out of a linearization
/// keeps the linearization valid. Keeping it would let the search place it
/// at every later point, which multiplies the states on a key with many
/// timed-out writes (a crash-heavy run) without changing the answer.
/// A cas_mismatch is the exception (any such value is "not its expect"), so
/// with one present those writes are kept, all writing the one value
/// [`OTHER`], which makes them interchangeable twins.
fn unobserved_unknown_writes(ops: Vec<Candidate>) -> Vec<Candidate> {
    let observed: HashSet<Value> = ops
        .iter()
        .filter_map(|c| match c.effect {
            Effect::Read(v) | Effect::Swap { expect: v, .. } => Some(v),
            _ => None,
        })
        .collect();
    let mismatch = ops.iter().any(|c| matches!(c.effect, Effect::ReadNot(_)));
    let unobserved = |c: &Candidate| {
        c.complete.is_none() && c.effect.written().is_some_and(|v| !observed.contains(&v))
    };
    ops.into_iter()
        .filter_map(|mut c| {
            if !unobserved(&c) {
                return Some(c);
            }
            c.effect = match c.effect {
                Effect::Swap { expect, .. } => Effect::Swap { expect, new: OTHER },
                _ => Effect::Write(OTHER),
            };
            mismatch.then_some(c)
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
