//! Verdicts on small hand-written histories, one behaviour each.

use history::{check, check_with, Action, Budget, Operation, Outcome, Verdict, Violation};

const MS: u64 = 1_000_000;

fn op(process: u64, key: &str, action: Action, invoke_ms: u64, complete_ms: u64) -> Operation {
    Operation {
        process,
        key: key.to_string(),
        action,
        invoke: invoke_ms * MS,
        complete: Some(complete_ms * MS),
        outcome: Outcome::Ok,
    }
}

fn put(process: u64, key: &str, value: &str, invoke_ms: u64, complete_ms: u64) -> Operation {
    op(
        process,
        key,
        Action::Put(value.into()),
        invoke_ms,
        complete_ms,
    )
}

fn get(process: u64, key: &str, read: Option<&str>, invoke_ms: u64, complete_ms: u64) -> Operation {
    op(
        process,
        key,
        Action::Get(read.map(Into::into)),
        invoke_ms,
        complete_ms,
    )
}

fn cas(process: u64, key: &str, expect: Option<&str>, new: &str, at: (u64, u64)) -> Operation {
    let action = Action::Cas {
        expect: expect.map(Into::into),
        new: new.into(),
    };
    op(process, key, action, at.0, at.1)
}

fn with_outcome(mut op: Operation, outcome: Outcome) -> Operation {
    op.outcome = outcome;
    if outcome == Outcome::Unknown {
        op.complete = None;
    }
    op
}

fn violation(ops: &[Operation]) -> Violation {
    match check(ops) {
        Verdict::Violation(v) => *v,
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[test]
fn sequential_history_is_linearizable() {
    let ops = [
        get(1, "x", None, 0, 1),
        put(1, "x", "a", 2, 3),
        get(2, "x", Some("a"), 4, 5),
        op(2, "x", Action::Delete, 6, 7),
        get(1, "x", None, 8, 9),
    ];
    assert_eq!(check(&ops), Verdict::Linearizable);
}

#[test]
fn overlapping_ops_linearizable_in_one_order_only() {
    // Both puts overlap both gets; the reads force a before b.
    let ops = [
        put(1, "x", "a", 0, 10),
        put(2, "x", "b", 0, 10),
        get(3, "x", Some("a"), 1, 4),
        get(4, "x", Some("b"), 5, 12),
    ];
    assert_eq!(check(&ops), Verdict::Linearizable);
    // Reading b then a then b again is not possible with one write each.
    let mut swapped = ops.to_vec();
    swapped.push(get(3, "x", Some("a"), 13, 14));
    swapped.push(get(4, "x", Some("b"), 15, 16));
    let v = violation(&swapped);
    assert_eq!(v.key, "x");
    assert_eq!(v.at, 14 * MS);
}

#[test]
fn stale_read_names_key_values_and_times() {
    let ops = [
        put(1, "k169", "v1", 0, 1),
        put(1, "k169", "v169", 5800, 5810),
        get(2, "k169", Some("v1"), 5873, 5875),
    ];
    let v = violation(&ops);
    assert_eq!(v.key, "k169");
    assert_eq!(v.op_index, 2);
    assert_eq!(v.at, 5875 * MS);
    assert_eq!(
        v.explanation,
        "get k169 returned \"v1\" but put k169=\"v169\" was acknowledged at t=5.810000000s \
         (completed before the get was invoked at t=5.873000000s)"
    );
    assert_eq!(v.operations, vec![1, 2]);
    assert!(v
        .to_string()
        .starts_with("at t=5.875000000s (operation 2): get k169"));
}

#[test]
fn lost_acknowledged_write_after_crash_gap_is_detected() {
    // The write is acknowledged, the node "crashes" for 2 s, and the
    // key comes back empty.
    let ops = [
        put(1, "x", "a", 100, 105),
        get(2, "x", Some("a"), 106, 107),
        get(2, "x", None, 2200, 2201),
    ];
    let v = violation(&ops);
    assert_eq!(v.op_index, 2);
    assert!(
        v.explanation.starts_with(
            "get x returned nothing but put x=\"a\" was acknowledged at t=0.105000000s"
        ),
        "{}",
        v.explanation
    );
}

#[test]
fn unknown_put_may_or_may_not_have_happened() {
    let unknown = with_outcome(put(1, "x", "a", 0, 1), Outcome::Unknown);
    let happened = [unknown.clone(), get(2, "x", Some("a"), 50, 51)];
    let never = [unknown.clone(), get(2, "x", None, 50, 51)];
    let late = [
        unknown.clone(),
        get(2, "x", None, 50, 51),
        get(2, "x", Some("a"), 60, 61),
    ];
    for ops in [&happened[..], &never, &late] {
        assert_eq!(check(ops), Verdict::Linearizable, "{ops:?}");
    }
    // But once seen it cannot be undone.
    let undone = [
        unknown,
        get(2, "x", Some("a"), 50, 51),
        get(2, "x", None, 60, 61),
    ];
    assert!(matches!(check(&undone), Verdict::Violation(_)));
}

#[test]
fn failed_operations_are_ignored() {
    let ops = [
        put(1, "x", "a", 0, 1),
        with_outcome(put(1, "x", "b", 2, 3), Outcome::Fail),
        with_outcome(op(1, "x", Action::Delete, 4, 5), Outcome::Fail),
        get(2, "x", Some("a"), 6, 7),
    ];
    assert_eq!(check(&ops), Verdict::Linearizable);
}

#[test]
fn cas_applies_only_on_match() {
    let ok = [
        put(1, "x", "a", 0, 1),
        cas(2, "x", Some("a"), "b", (2, 3)),
        with_outcome(cas(2, "x", Some("a"), "c", (4, 5)), Outcome::Fail),
        get(1, "x", Some("b"), 6, 7),
        cas(1, "y", None, "created", (0, 1)),
        get(1, "y", Some("created"), 2, 3),
    ];
    assert_eq!(check(&ok), Verdict::Linearizable);
    // A cas acknowledged while the key held something else.
    let mismatch = [put(1, "x", "a", 0, 1), cas(2, "x", Some("z"), "b", (2, 3))];
    let v = violation(&mismatch);
    assert_eq!(v.op_index, 1);
    assert!(
        v.explanation.contains("cas x \"z\"->\"b\"") && v.explanation.contains("x held \"a\""),
        "{}",
        v.explanation
    );
}

#[test]
fn keys_are_independent() {
    let ops = [
        put(1, "x", "a", 0, 10),
        put(2, "y", "b", 0, 10),
        get(3, "y", Some("b"), 11, 12),
        get(3, "x", Some("a"), 11, 12),
        get(4, "x", None, 20, 21),
        get(4, "y", Some("b"), 20, 21),
        get(5, "z", None, 30, 31),
    ];
    let v = violation(&ops);
    assert_eq!((v.key.as_str(), v.op_index), ("x", 4));
    assert!(v.other_keys.is_empty());
    let mut both = ops.to_vec();
    both.push(get(5, "y", Some("never written"), 40, 41));
    let v = violation(&both);
    assert_eq!(v.other_keys, vec!["y".to_string()]);
}

#[test]
fn value_nothing_wrote_is_named() {
    let v = violation(&[get(1, "x", Some("ghost"), 0, 1)]);
    assert_eq!(
        v.explanation,
        "get x returned \"ghost\", a value no operation wrote to x"
    );
}

#[test]
fn exhausted_budget_is_unknown_not_a_hang() {
    // 40 mutually concurrent puts: every order of them is a configuration,
    // and the impossible read makes the search try them all.
    let ops: Vec<Operation> = (0..40)
        .map(|i| put(i, "x", &format!("v{i}"), 0, 100))
        .chain([get(99, "x", Some("never"), 200, 201)])
        .collect();
    match check_with(&ops, Budget { max_states: 1000 }) {
        Verdict::Unknown { reason } => assert!(reason.contains("key(s) x"), "{reason}"),
        other => panic!("expected unknown, got {other:?}"),
    }
}
