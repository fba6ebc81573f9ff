//! Large generated histories: a correct store's is accepted, and one
//! tampered read in it is found.

use history::generate::{generate, Workload};
use history::{check, Action, Operation, Outcome, Verdict};

const WORKLOAD: Workload = Workload {
    seed: 7,
    clients: 10,
    keys: 100,
    operations: 10_000,
};

#[test]
fn ten_thousand_op_history_is_linearizable() {
    let ops = generate(&WORKLOAD);
    assert_eq!(ops.len(), 10_000);
    // The generator really produces overlap, timeouts and failures.
    let overlapping = ops
        .windows(2)
        .filter(|w| w[0].complete.is_none_or(|c| c > w[1].invoke))
        .count();
    assert!(overlapping > 5_000, "{overlapping}");
    assert!(ops.iter().any(|o| o.outcome == Outcome::Unknown));
    assert!(ops.iter().any(|o| o.outcome == Outcome::Fail));
    assert_eq!(check(&ops), Verdict::Linearizable);
}

#[test]
fn generator_is_deterministic() {
    let small = Workload {
        operations: 500,
        ..WORKLOAD
    };
    assert_eq!(generate(&small), generate(&small));
    assert_ne!(generate(&small), generate(&Workload { seed: 8, ..small }));
}

/// Values are unique, so this is the put that wrote `value`.
fn writer<'a>(ops: &'a [Operation], value: &str) -> Option<&'a Operation> {
    ops.iter().find(|o| match &o.action {
        Action::Put(v) | Action::Cas { new: v, .. } => v == value,
        _ => false,
    })
}

fn acked_put(op: &Operation) -> Option<&str> {
    match (&op.action, op.outcome) {
        (Action::Put(v), Outcome::Ok) => Some(v),
        _ => None,
    }
}

#[test]
fn one_injected_stale_read_is_rejected() {
    let mut ops = generate(&WORKLOAD);
    // A get that read the value of an acknowledged put p2 which itself
    // strictly followed an acknowledged put p1 on the same key: make it
    // return p1's value, which p2 had already overwritten.
    let (index, old) = ops
        .iter()
        .enumerate()
        .filter(|(_, g)| g.outcome == Outcome::Ok)
        .find_map(|(i, g)| {
            let Action::Get(Some(read)) = &g.action else {
                return None;
            };
            let p2 = writer(&ops, read).filter(|p| acked_put(p).is_some())?;
            let p1 = ops.iter().find(|p1| {
                p1.key == g.key
                    && acked_put(p1).is_some()
                    && p1.complete.unwrap() < p2.invoke
                    && p2.complete.unwrap() < g.invoke
            })?;
            Some((i, acked_put(p1)?.to_string()))
        })
        .expect("the generated history has such a read");
    ops[index].action = Action::Get(Some(old.clone()));
    let Verdict::Violation(v) = check(&ops) else {
        panic!("stale read at {index} not detected");
    };
    assert_eq!(v.op_index, index);
    assert_eq!(v.at, ops[index].complete.unwrap());
    let key = &ops[index].key;
    assert!(
        v.explanation
            .starts_with(&format!("get {key} returned \"{old}\" but ")),
        "{}",
        v.explanation
    );
}
