//! Scenarios of the `rpc` test program (`tests/programs/c/rpc.c`): a ping
//! server and a client with a per-ping timeout and switches for how it
//! meets a broken connection, shared by the network fault and liveness
//! tests.

use crate::checks::run_scenario_twice;
use crate::paths::scratch_dir;
use crate::program::Program;
use crate::scenario::{ScenarioFile, ScenarioRun};

/// How the client of [`rpc_scenario`] runs.
#[derive(Debug, Clone, Copy)]
pub struct Client<'a> {
    /// `tcp` or `udp`.
    pub proto: &'a str,
    /// How long it waits for each pong.
    pub timeout_ms: u32,
    /// How many pings it sends.
    pub count: u32,
    /// Its switches: `reconnect`, `hang`, `history`.
    pub flags: &'a [&'a str],
}

/// An `rpc` server and `client`, 20 s of seed `seed`, plus `extra` (faults
/// and sections), run twice (same verdicts and trace hashes).
pub fn rpc_scenario(dir_name: &str, seed: u64, client: Client, extra: &str) -> ScenarioRun {
    let dir = scratch_dir(dir_name);
    let rpc = Program::c("rpc").path();
    let flags: String = client.flags.iter().map(|f| format!(", \"{f}\"")).collect();
    let text = format!(
        r#"name = "rpc"
duration = "20s"

[[node]]
name = "server"
command = ["{rpc}", "server", "7200", "{proto}"]

[[node]]
name = "client"
command = ["{rpc}", "client", "server", "7200", "{proto}", "{timeout}", "{count}"{flags}]
{extra}"#,
        rpc = rpc.display(),
        proto = client.proto,
        timeout = client.timeout_ms,
        count = client.count,
    );
    let file = ScenarioFile::raw(&dir, "rpc.toml", &text);
    run_scenario_twice(&file.runner().seed(seed))
}
