//! The etcd-binary harness's workload: a few client tasks (tokio, on two
//! worker threads) that put and get keys through etcd's v3 gRPC API (tonic)
//! on random members, with timeouts and back-off, and append every
//! operation to a key-value history (JSON lines) for faultline's
//! linearizability check.
//!
//! `--serializable-reads` is a bug switch: reads are served by any member
//! without a quorum (they may be stale) but recorded as linearizable ones.

mod args;
mod clock;
mod history;
mod ops;
mod worker;

use std::sync::Arc;

use clap::Parser;

use args::Args;
use history::History;

fn main() {
    let args = Args::parse();
    let history = Arc::new(History::open(&args.history).unwrap_or_else(|e| {
        eprintln!("etcd-workload: cannot open history {}: {e}", args.history);
        std::process::exit(2);
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("etcd-workload: cannot start the runtime: {e}");
            std::process::exit(2);
        });
    let counts = runtime.block_on(async {
        let deadline = clock::now_ns() + args.duration.as_nanos() as u64;
        let budget = Arc::new(worker::Budget::new(args.ops));
        let workers: Vec<_> = (1..=args.clients)
            .map(|process| {
                let (args, history, budget) =
                    (args.clone(), Arc::clone(&history), Arc::clone(&budget));
                tokio::spawn(async move {
                    worker::run(process, &args, &history, &budget, deadline).await
                })
            })
            .collect();
        let mut total = worker::Counts::default();
        for w in workers {
            total.add(&w.await.expect("worker task"));
        }
        total
    });
    println!(
        "done: {} ok, {} failed, {} unknown",
        counts.ok, counts.fail, counts.unknown
    );
}
