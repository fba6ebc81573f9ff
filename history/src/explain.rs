//! Turning a failed search into a message a user can act on.
//!
//! Two common shapes get a one-line story: a read of a value nothing wrote,
//! and a stale read (an acknowledged write finished before the read began,
//! and nothing that could have written the value read again fits in
//! between). Anything else is described by the operation that could not be
//! placed, the values the key could hold at that point, and the operations
//! overlapping it.

use crate::model::{Candidate, Effect, KeyHistory, Value, ABSENT};
use crate::op::{time, Operation};
use crate::search::Stuck;
use crate::verdict::Violation;

/// How many overlapping operations a generic explanation lists.
const MAX_LISTED: usize = 10;

/// Explains why `key`'s history got `stuck`.
pub(crate) fn explain(history: &[Operation], key: &KeyHistory, stuck: &Stuck) -> Violation {
    let blocked = &key.ops[stuck.op];
    let (explanation, involved) = stale_read(history, key, blocked)
        .unwrap_or_else(|| unplaceable(history, key, blocked, &stuck.states));
    Violation {
        key: key.key.to_string(),
        at: blocked
            .complete
            .expect("only acknowledged operations block"),
        op_index: blocked.index,
        explanation,
        operations: involved.iter().map(|c| c.index).collect(),
        other_keys: Vec::new(),
    }
}

/// The one-line story for a get whose value cannot be explained by the
/// writes around it, if that is what happened.
fn stale_read<'k>(
    history: &[Operation],
    key: &'k KeyHistory,
    get: &'k Candidate,
) -> Option<(String, Vec<&'k Candidate>)> {
    let Effect::Read(read) = get.effect else {
        return None;
    };
    if !key.is_register() {
        return None;
    }
    let writes_of_read: Vec<&Candidate> = key
        .ops
        .iter()
        .filter(|c| c.effect.written() == Some(read))
        .collect();
    let shown = key.shown(read);
    if read != ABSENT && writes_of_read.is_empty() {
        let text = format!(
            "get {} returned {shown}, a value no operation wrote to {}",
            key.key, key.key
        );
        return Some((text, vec![get]));
    }
    // The latest acknowledged write before the get after which no write of
    // the value read fits: the register cannot hold that value any more.
    let mut before: Vec<&Candidate> = key
        .ops
        .iter()
        .filter(|w| w.precedes(get) && w.effect.written().is_some_and(|v| v != read))
        .collect();
    before.sort_by_key(|w| std::cmp::Reverse(w.complete));
    let overwrite = before.into_iter().find(|w| {
        !writes_of_read
            .iter()
            .any(|r| !r.precedes(w) && !get.precedes(r))
    })?;
    let text = format!(
        "get {} returned {shown} but {} was acknowledged at {} (completed before the get was invoked at {})",
        key.key,
        history[overwrite.index],
        time(overwrite.complete.expect("it precedes the get")),
        time(get.invoke),
    );
    Some((text, vec![overwrite, get]))
}

/// The generic story: the operation, what the key could hold, and the
/// operations that overlap it (the set no order could satisfy).
fn unplaceable<'k>(
    history: &[Operation],
    key: &'k KeyHistory,
    blocked: &'k Candidate,
    states: &[Value],
) -> (String, Vec<&'k Candidate>) {
    let holds: Vec<String> = states.iter().map(|&s| key.shown(s)).collect();
    let overlapping: Vec<&Candidate> = key
        .ops
        .iter()
        .filter(|c| c.index != blocked.index && !c.precedes(blocked) && !blocked.precedes(c))
        .collect();
    let last_write = key
        .ops
        .iter()
        .filter(|w| w.precedes(blocked) && w.effect.changes())
        .max_by_key(|w| w.complete);
    let mut text = format!(
        "no order of the operations on {} explains {}: whatever order the earlier operations took, {} held {} when it had to take effect",
        key.key,
        history[blocked.index].describe(),
        key.key,
        holds.join(" or "),
    );
    if let Some(w) = last_write {
        text.push_str(&format!(
            "; last acknowledged write before it: {}",
            history[w.index].describe()
        ));
    }
    if overlapping.is_empty() {
        text.push_str("; no operation overlaps it");
    } else {
        let listed: Vec<String> = overlapping
            .iter()
            .take(MAX_LISTED)
            .map(|c| history[c.index].describe())
            .collect();
        text.push_str(&format!("; overlapping it: {}", listed.join(", ")));
        if overlapping.len() > MAX_LISTED {
            text.push_str(&format!(" and {} more", overlapping.len() - MAX_LISTED));
        }
    }
    let involved = std::iter::once(blocked)
        .chain(last_write)
        .chain(overlapping)
        .collect();
    (text, involved)
}
