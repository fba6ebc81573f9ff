//! The kvserver crash scenario the disk, runner and timeline tests share:
//! one server with its write-ahead log on a simulated disk, restarted when it
//! exits, one checking client, crashes of the server about every 500 ms, and
//! optional fsync EIO / write ENOSPC faults.

use std::path::{Path, PathBuf};

use crate::paths::workspace_root;

/// A kv scenario's settings.
pub struct KvScenario<'a> {
    /// The scenario name (it names the artifacts and derives the seeds).
    pub name: &'a str,
    /// Virtual time per seed, e.g. "60s".
    pub duration: &'a str,
    /// The server binary (the Rust or the Go build).
    pub server: PathBuf,
    /// A `--bug` switch of the server.
    pub bug: Option<&'a str>,
    /// Puts the client makes.
    pub puts: u32,
    /// Probability of fsync EIO and of write ENOSPC (each).
    pub eio: f64,
}

impl KvScenario<'_> {
    /// The Rust server, no bug, no disk errors.
    pub fn rust(name: &str) -> KvScenario<'_> {
        KvScenario {
            name,
            duration: "60s",
            server: workspace_root().join("target/release/kvserver"),
            bug: None,
            puts: 100,
            eio: 0.0,
        }
    }

    /// The scenario's TOML, with the server's disk under `dir`.
    pub fn toml(&self, dir: &Path) -> String {
        let data = dir.join("mnt").join("kv");
        let bug = self
            .bug
            .map_or(String::new(), |b| format!(r#", "--bug", "{b}""#));
        let client = workspace_root().join("target/release/kvclient");
        let mut text = format!(
            r#"name = "{name}"
duration = "{duration}"

[[node]]
name = "kv"
data_dir = "{data}"
command = ["{server}", "--listen", "0.0.0.0:7000", "--data", "{data}"{bug}]
restart_on_exit = true

[[node]]
name = "client"
command = ["{client}", "--server", "kv:7000", "--puts", "{puts}"]

[[fault]]
kind = "crash"
every = "500ms"
min_down = "10ms"
max_down = "50ms"
nodes = ["kv"]
"#,
            name = self.name,
            duration = self.duration,
            data = data.display(),
            server = self.server.display(),
            client = client.display(),
            puts = self.puts,
        );
        if self.eio > 0.0 {
            text.push_str(&format!(
                r#"
[[fault]]
kind = "fsync_error"
probability = {eio}
nodes = ["kv"]

[[fault]]
kind = "write_error"
errno = "ENOSPC"
probability = {eio}
nodes = ["kv"]
"#,
                eio = self.eio
            ));
        }
        text
    }
}
