//! Command-line flags of the workload.

/// The workload's settings.
#[derive(Clone)]
pub struct Args {
    /// host:port of each etcd client endpoint.
    pub endpoints: Vec<String>,
    /// How long to run, in ns of the (virtual) monotonic clock.
    pub duration_ns: u64,
    /// Client threads.
    pub clients: usize,
    /// Distinct keys.
    pub keys: usize,
    /// Where the history goes (default $FAULTLINE_HISTORY).
    pub history: String,
    /// Bug switch: serializable reads recorded as linearizable.
    pub serializable_reads: bool,
}

impl Args {
    /// Parses the flags.
    pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut a = Args {
            endpoints: Vec::new(),
            duration_ns: 20_000_000_000,
            clients: 3,
            keys: 5,
            history: std::env::var("FAULTLINE_HISTORY").unwrap_or_else(|_| "history.jsonl".into()),
            serializable_reads: false,
        };
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--endpoints" => a.endpoints = value()?.split(',').map(str::to_owned).collect(),
                "--duration" => {
                    let v = value()?;
                    let secs: f64 = v
                        .trim_end_matches('s')
                        .parse()
                        .map_err(|_| format!("bad --duration {v:?}"))?;
                    a.duration_ns = (secs * 1e9) as u64;
                }
                "--clients" => a.clients = value()?.parse().map_err(|_| "bad --clients")?,
                "--keys" => a.keys = value()?.parse().map_err(|_| "bad --keys")?,
                "--history" => a.history = value()?,
                "--serializable-reads" => a.serializable_reads = true,
                other => return Err(format!("unknown flag {other:?}")),
            }
        }
        if a.endpoints.is_empty() || a.clients == 0 || a.keys == 0 {
            return Err("--endpoints is required; --clients and --keys must be positive".into());
        }
        Ok(a)
    }
}
