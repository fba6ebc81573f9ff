//! Election safety: at most one leader per raft term.

use std::collections::BTreeMap;

/// What a member says of itself: its id, the leader it follows, its term.
struct Status {
    member: u64,
    leader: u64,
    term: u64,
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
/// report themselves leader of the same term. Leaders of different terms (a
/// cut-off old leader that does not know yet) are allowed.
pub async fn check(endpoints: &[String]) -> bool {
    let mut leaders: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut seen = Vec::new();
    for (ep, s) in crate::ask_all(endpoints, status).await {
        let Some(s) = s else { continue };
        let leads = s.member != 0 && s.member == s.leader;
        let role = if leads { "leader" } else { "follower" };
        seen.push(format!(
            "{ep} {role} of term {} (member {:x}, leader {:x})",
            s.term, s.member, s.leader
        ));
        if leads {
            leaders.entry(s.term).or_default().push(ep);
        }
    }
    println!(
        "{}",
        if seen.is_empty() {
            "no member answered".into()
        } else {
            seen.join("; ")
        }
    );
    match leaders.iter().find(|(_, eps)| eps.len() > 1) {
        Some((term, eps)) => {
            println!(
                "election safety violated: {} all lead term {term}",
                eps.join(" and ")
            );
            false
        }
        None => true,
    }
}
