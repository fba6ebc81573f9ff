//! Invariant probes for the etcd-binary harness, run by faultline inside
//! the simulation (`[[invariant]]` in etcd3*.toml) on a host of their own.
//! They ask the members with the real `etcdctl` and exit 1 when the
//! invariant does not hold, saying why on stdout.
//!
//! * `election-safety`: no two members report themselves leader of the
//!   same raft term (`etcdctl endpoint status -w json` on every member).
//! * `replicas-agree --from 13s`: from that virtual time on (after the
//!   workload's quiet period; earlier runs pass at once), every member that
//!   answers has the same revision and the same keys and values
//!   (`etcdctl get --prefix "" --consistency=s -w json` on each member),
//!   retried every 200 ms for a while, since a member may still be catching up.

use std::collections::BTreeMap;
use std::process::{exit, Command};

use serde_json::Value;

const USAGE: &str = "usage: etcd-probe election-safety --endpoints h1:p,h2:p,...\n       etcd-probe replicas-agree --endpoints h1:p,... [--from 13s] [--attempts 10]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let Some(endpoints) = flag("--endpoints") else {
        fail_usage("--endpoints is required")
    };
    let endpoints: Vec<String> = endpoints
        .split(',')
        .map(|e| format!("http://{e}"))
        .collect();
    let held = match args.first().map(String::as_str) {
        Some("election-safety") => election_safety(&endpoints),
        Some("replicas-agree") => {
            let from = flag("--from").map_or(0, |f| seconds_ns(&f));
            let attempts = flag("--attempts").map_or(10, |a| {
                a.parse()
                    .unwrap_or_else(|_| fail_usage("--attempts: not a number"))
            });
            let now: u64 = std::env::var("FAULTLINE_VTIME")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(u64::MAX);
            if now < from {
                println!("t={now}ns: before the quiet period ({from}ns); nothing to check");
                true
            } else {
                replicas_agree(&endpoints, attempts)
            }
        }
        _ => fail_usage("no such probe"),
    };
    exit(if held { 0 } else { 1 });
}

fn fail_usage(why: &str) -> ! {
    eprintln!("etcd-probe: {why}\n{USAGE}");
    exit(2)
}

/// `13s`, `500ms` as ns.
fn seconds_ns(text: &str) -> u64 {
    let (num, unit) = match text.strip_suffix("ms") {
        Some(n) => (n, 1_000_000),
        None => (text.strip_suffix('s').unwrap_or(text), 1_000_000_000),
    };
    num.parse::<u64>()
        .unwrap_or_else(|_| fail_usage("--from: a duration such as 13s or 500ms"))
        * unit
}

/// Runs etcdctl against `endpoints` and parses its JSON output (members
/// that do not answer are missing from it; etcdctl then exits 1, which
/// does not matter here).
fn etcdctl(endpoints: &[String], args: &[&str]) -> Value {
    let out = Command::new("etcdctl")
        .arg(format!("--endpoints={}", endpoints.join(",")))
        .args(["--dial-timeout=500ms", "--command-timeout=1s", "-w", "json"])
        .args(args)
        .env("ETCDCTL_API", "3")
        .output()
        .unwrap_or_else(|e| {
            eprintln!("etcd-probe: cannot run etcdctl: {e}");
            exit(2)
        });
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or(Value::Null)
}

fn election_safety(endpoints: &[String]) -> bool {
    let status = etcdctl(endpoints, &["endpoint", "status"]);
    let mut leaders: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut seen = Vec::new();
    for member in status.as_array().into_iter().flatten() {
        let ep = member["Endpoint"].as_str().unwrap_or("?");
        let s = &member["Status"];
        let (id, leader, term) = (
            s["header"]["member_id"].as_u64().unwrap_or(0),
            s["leader"].as_u64().unwrap_or(0),
            s["raftTerm"].as_u64().unwrap_or(0),
        );
        let role = if id != 0 && id == leader {
            "leader"
        } else {
            "follower"
        };
        seen.push(format!(
            "{ep} {role} of term {term} (member {id:x}, leader {leader:x})"
        ));
        if role == "leader" {
            leaders.entry(term).or_default().push(ep.to_string());
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

/// One member's view: its revision and every key with its value (base64).
type View = (u64, BTreeMap<String, String>);

/// What `endpoint` holds, if it answers.
fn snapshot(endpoint: &str) -> Option<View> {
    let v = etcdctl(
        &[endpoint.to_string()],
        &["get", "", "--prefix", "--consistency=s"],
    );
    let revision = v["header"]["revision"].as_u64()?;
    let kvs = v["kvs"].as_array().into_iter().flatten().map(|kv| {
        let field = |f: &str| kv[f].as_str().unwrap_or_default().to_string();
        (field("key"), field("value"))
    });
    Some((revision, kvs.collect()))
}

fn replicas_agree(endpoints: &[String], attempts: u32) -> bool {
    let mut last = String::new();
    for attempt in 1..=attempts {
        let views: Vec<(String, View)> = endpoints
            .iter()
            .filter_map(|ep| snapshot(ep).map(|s| (ep.clone(), s)))
            .collect();
        let summary: Vec<String> = views
            .iter()
            .map(|(ep, (rev, kvs))| format!("{ep} revision {rev}, {} key(s)", kvs.len()))
            .collect();
        last = format!("attempt {attempt}: {}", summary.join("; "));
        println!("{last}");
        if views.len() >= 2 && views.windows(2).all(|w| w[0].1 == w[1].1) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    println!("replicas disagree after {attempts} attempts ({last}; keys and values are base64)");
    false
}
