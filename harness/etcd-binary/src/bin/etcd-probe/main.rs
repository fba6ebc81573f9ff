//! Invariant probes for the etcd-binary harness, run by faultline inside
//! the simulation (`[[invariant]]` in etcd3*.toml) on a host of their own.
//! They ask every member over etcd's v3 gRPC API and exit 1 when the
//! invariant does not hold, saying why on stdout.
//!
//! * `election-safety`: no two members report themselves leader of the
//!   same raft term (the Maintenance `Status` call on every member), still
//!   when looked at again (a new leader reports its applied term, which
//!   lags: see election.rs).
//! * `replicas-agree --from 13s`: from that virtual time on (the scenario's
//!   quiet period; earlier runs pass at once), every member answers with
//!   the same revision and the same keys and values (a serializable range
//!   over all keys on each member), retried every 200 ms for a while, since
//!   a restarted member may still be catching up.

mod agree;
mod election;

use std::time::Duration;

use clap::{Parser, Subcommand};

/// How long a connection or a call to one member may take.
const TIMEOUT: Duration = Duration::from_secs(1);

/// Checks an invariant of the etcd cluster.
#[derive(Parser)]
#[command(name = "etcd-probe")]
struct Cli {
    #[command(subcommand)]
    probe: Probe,
}

/// The invariants.
#[derive(Subcommand)]
enum Probe {
    /// No two members lead the same raft term.
    ElectionSafety {
        /// host:port of each member's client endpoint, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        endpoints: Vec<String>,
    },
    /// Every member holds the same revision, keys and values.
    ReplicasAgree {
        /// host:port of each member's client endpoint, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        endpoints: Vec<String>,
        /// Check only from this virtual time on (earlier runs pass at once).
        #[arg(long, default_value = "0s", value_parser = etcd_harness::duration::parse)]
        from: Duration,
        /// How many times to look before calling a difference a violation.
        #[arg(long, default_value_t = 10)]
        attempts: u32,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let held = match Cli::parse().probe {
        Probe::ElectionSafety { endpoints } => election::check(&endpoints).await,
        Probe::ReplicasAgree {
            endpoints,
            from,
            attempts,
        } => {
            let now: u64 = std::env::var("FAULTLINE_VTIME")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(u64::MAX);
            let from = from.as_nanos() as u64;
            if now < from {
                println!("t={now}ns: before the quiet period ({from}ns); nothing to check");
                true
            } else {
                agree::check(&endpoints, attempts).await
            }
        }
    };
    std::process::exit(if held { 0 } else { 1 });
}

/// Asks every member at once: `ask(endpoint)` for each, in endpoint order.
async fn ask_all<T, F>(endpoints: &[String], ask: fn(String) -> F) -> Vec<(String, Option<T>)>
where
    T: Send + 'static,
    F: std::future::Future<Output = Option<T>> + Send + 'static,
{
    let tasks: Vec<_> = endpoints
        .iter()
        .map(|ep| (ep.clone(), tokio::spawn(ask(ep.clone()))))
        .collect();
    let mut answers = Vec::new();
    for (ep, task) in tasks {
        answers.push((format!("http://{ep}"), task.await.ok().flatten()));
    }
    answers
}

/// A connection to `endpoint` and `call` on it, `None` if either fails or
/// takes longer than [`TIMEOUT`].
async fn on_member<T, F>(endpoint: &str, call: impl FnOnce(etcd_client::Client) -> F) -> Option<T>
where
    F: std::future::Future<Output = Result<T, etcd_client::Error>>,
{
    let client = etcd_harness::member::connect(endpoint, TIMEOUT)
        .await
        .ok()?;
    tokio::time::timeout(TIMEOUT, call(client)).await.ok()?.ok()
}
