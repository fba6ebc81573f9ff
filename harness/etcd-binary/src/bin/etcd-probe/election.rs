//! Election safety: at most one leader per raft term.
//!
//! The term etcd 3.4's `Status` reports is its *applied* term (the term of
//! the last entry it applied), not raft's: a member just elected leader of
//! term T+1 says "leader of term T" until it applies the first entry of its
//! own term. Read at that moment beside the old leader of term T, which
//! has not heard of the election yet, the two look like two leaders of one
//! term. So a conflict is looked at again: a member that is still leader
//! and now reports a higher term was that new leader, and its claim is
//! dropped; a conflict that outlives the looks is a violation.

use std::collections::BTreeMap;
use std::time::Duration;

/// How many times a conflict is looked at again, [`RECHECK_EVERY`] apart.
const RECHECKS: u32 = 5;
/// The time between those looks: a leader commits and applies an entry
/// of its own term within a heartbeat (100 ms in the harness).
const RECHECK_EVERY: Duration = Duration::from_millis(200);

/// What a member says of itself: its id, the leader it follows, its term.
struct Status {
    member: u64,
    leader: u64,
    term: u64,
}

impl Status {
    fn leads(&self) -> bool {
        self.member != 0 && self.member == self.leader
    }
}

async fn status(endpoint: String) -> Option<Status> {
    let resp = crate::on_member(&endpoint, |mut c| async move { c.status().await }).await?;
    Some(Status {
        member: resp.header().map_or(0, |h| h.member_id()),
        leader: resp.leader(),
        term: resp.raft_term(),
    })
}

/// Asks every member's status; false (and why, on stdout) when two members
/// report themselves leader of the same term and still do when looked at
/// again. Leaders of different terms (a cut-off old leader that does not
/// know yet) are allowed.
pub async fn check(endpoints: &[String]) -> bool {
    let answers = crate::ask_all(endpoints, status).await;
    println!("{}", describe(&answers));
    let mut leaders: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for (ep, s) in &answers {
        if let Some(s) = s.as_ref().filter(|s| s.leads()) {
            leaders.entry(s.term).or_default().push(ep.clone());
        }
    }
    let Some((&term, claimants)) = leaders.iter().find(|(_, eps)| eps.len() > 1) else {
        return true;
    };
    match confirmed(claimants.clone(), term).await {
        Some(eps) => {
            println!(
                "election safety violated: {} all lead term {term}",
                eps.join(" and ")
            );
            false
        }
        None => true,
    }
}

/// Looks at the members `claimants` (each reported leading `term`) again:
/// the ones still claiming it after [`RECHECKS`] looks, if two or more;
/// `None` once a claim is shown to be a new leader's applied term.
async fn confirmed(mut claimants: Vec<String>, term: u64) -> Option<Vec<String>> {
    for look in 1..=RECHECKS {
        tokio::time::sleep(RECHECK_EVERY).await;
        let bare: Vec<String> = claimants
            .iter()
            .map(|ep| ep.trim_start_matches("http://").to_string())
            .collect();
        let answers = crate::ask_all(&bare, status).await;
        println!(
            "look {look} at term {term}'s leaders: {}",
            describe(&answers)
        );
        claimants.retain(|ep| {
            let now = answers
                .iter()
                .find(|(e, _)| e == ep)
                .and_then(|(_, s)| s.as_ref());
            !now.is_some_and(|s| s.leads() && s.term > term)
        });
        if claimants.len() < 2 {
            return None;
        }
    }
    Some(claimants)
}

/// One line of what each member said.
fn describe(answers: &[(String, Option<Status>)]) -> String {
    let seen: Vec<String> = answers
        .iter()
        .filter_map(|(ep, s)| {
            let s = s.as_ref()?;
            let role = if s.leads() { "leader" } else { "follower" };
            Some(format!(
                "{ep} {role} of term {} (member {:x}, leader {:x})",
                s.term, s.member, s.leader
            ))
        })
        .collect();
    if seen.is_empty() {
        "no member answered".into()
    } else {
        seen.join("; ")
    }
}
