//! The cas_mismatch outcome and the list-append model on small histories.

use history::{check, Action, Element, Operation, Outcome, Seq, Verdict};

fn op(process: u64, action: Action, at: (u64, u64), outcome: Outcome) -> Operation {
    Operation {
        process,
        key: "x".into(),
        action,
        invoke: at.0,
        complete: (outcome != Outcome::Unknown).then_some(at.1),
        outcome,
    }
}

fn put(v: &str, at: (u64, u64), outcome: Outcome) -> Operation {
    op(1, Action::Put(v.into()), at, outcome)
}

fn cas(expect: &str, new: &str, at: (u64, u64), outcome: Outcome) -> Operation {
    let action = Action::Cas {
        expect: Some(expect.into()),
        new: new.into(),
    };
    op(2, action, at, outcome)
}

fn get(v: &str, at: (u64, u64)) -> Operation {
    op(3, Action::Get(Some(v.into())), at, Outcome::Ok)
}

fn append(n: i64, at: (u64, u64), outcome: Outcome) -> Operation {
    op(
        1,
        Action::Append(Seq::List(vec![Element::Int(n)])),
        at,
        outcome,
    )
}

fn read(list: &[i64], at: (u64, u64)) -> Operation {
    let seq = Seq::List(list.iter().map(|&n| Element::Int(n)).collect());
    op(2, Action::Read(seq), at, Outcome::Ok)
}

fn is_violation(ops: &[Operation]) -> bool {
    matches!(check(ops), Verdict::Violation(_))
}

#[test]
fn cas_mismatch_catches_a_single_line_mutant_fail_does_not() {
    let linearizable = [
        put("a", (0, 1), Outcome::Ok),
        cas("c", "b", (2, 3), Outcome::CasMismatch),
        get("a", (4, 5)),
    ];
    assert_eq!(check(&linearizable), Verdict::Linearizable);
    // One line changed: the cas expected the value the key certainly held,
    // yet found another one.
    let mut mutant = linearizable.clone();
    mutant[1] = cas("a", "b", (2, 3), Outcome::CasMismatch);
    assert!(is_violation(&mutant));
    // Recorded as a plain failure, the same mutant passes: the information
    // is lost.
    mutant[1].outcome = Outcome::Fail;
    assert_eq!(check(&mutant), Verdict::Linearizable);
}

#[test]
fn cas_mismatch_may_meet_an_unread_write_of_unknown_outcome() {
    // "z" is read by nobody, but may have been written just before the cas
    // ran: the cas then found another value.
    let ops = [
        put("a", (0, 1), Outcome::Ok),
        put("z", (2, 0), Outcome::Unknown),
        cas("a", "b", (3, 4), Outcome::CasMismatch),
    ];
    assert_eq!(check(&ops), Verdict::Linearizable);
    // Without that write, nothing explains it.
    assert!(is_violation(&[ops[0].clone(), ops[2].clone()]));
}

#[test]
fn list_append_reads_see_acknowledged_appends_in_one_order() {
    let ok = [
        append(1, (0, 10), Outcome::Ok),
        append(2, (5, 30), Outcome::Ok),
        read(&[1], (12, 14)),
        read(&[1, 2], (31, 35)),
    ];
    assert_eq!(check(&ok), Verdict::Linearizable);
    // The appends overlap, so [2, 1] would do, but not after [1] was read.
    let mut swapped = ok.clone();
    swapped[3] = read(&[2, 1], (31, 35));
    assert!(is_violation(&swapped));
    // A read after both appends completed must see both.
    let mut lost = ok.clone();
    lost[3] = read(&[1], (31, 35));
    assert!(is_violation(&lost));
    // An append of unknown outcome may show up later, or never.
    let unknown = [
        append(7, (0, 0), Outcome::Unknown),
        read(&[], (1, 2)),
        read(&[7], (3, 4)),
    ];
    assert_eq!(check(&unknown), Verdict::Linearizable);
    assert!(is_violation(&[unknown[0].clone(), read(&[7, 7], (3, 4))]));
}

#[test]
fn string_append_concatenates_and_put_resets() {
    let text = |s: &str| Seq::Text(s.into());
    let ops = [
        op(1, Action::Append(text("ab")), (0, 1), Outcome::Ok),
        op(2, Action::Read(text("ab")), (2, 3), Outcome::Ok),
        op(1, Action::Put("c".into()), (4, 5), Outcome::Ok),
        op(1, Action::Append(text("d")), (6, 7), Outcome::Ok),
        op(2, Action::Read(text("cd")), (8, 9), Outcome::Ok),
    ];
    assert_eq!(check(&ops), Verdict::Linearizable);
    let mut stale = ops.clone();
    stale[4] = op(2, Action::Read(text("abd")), (8, 9), Outcome::Ok);
    assert!(is_violation(&stale));
}
