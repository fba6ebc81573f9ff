//! The value parsers of the flags (seeds, counts, shards, signals), also
//! used for the seeds that report.json and scenario files write as text.

use super::run::Explore;

/// Parses the value of `--explore`: a 0x-hex or decimal base, or `fresh`
/// (what a bare `--explore` means).
pub(super) fn parse_explore(s: &str) -> Result<Explore, String> {
    match s {
        "fresh" => Ok(Explore::Fresh),
        base => parse_seed(base)
            .map(Explore::Base)
            .map_err(|_| format!("--explore={s}: expected a base seed, e.g. --explore=0x5eed")),
    }
}

/// Parses `--seeds N` with N >= 1.
pub(super) fn parse_seeds(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("--seeds 0 runs nothing: give 1 or more seeds".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a number of seeds")),
    }
}

/// Parses `-j N` with N >= 1.
pub(super) fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("-j 0 runs nothing: give 1 or more jobs".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a number of jobs")),
    }
}

/// Parses `I/N` with I < N.
pub(super) fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("shard {s:?}: expected I/N with 0 <= I < N, e.g. 0/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Parses a seed: decimal, or hexadecimal with a 0x prefix.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("seed {s:?} is not a decimal or 0x-hex 64-bit number"))
}

/// Parses `TIME:SIGNAL` such as `5s:TERM`, `1500ms:SIGUSR1` or `2s:9`.
pub(super) fn parse_signal_at(s: &str) -> Result<(u64, i32), String> {
    let (time, sig) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: expected TIME:SIGNAL, e.g. 5s:TERM"))?;
    let at = crate::scenario::duration::parse_ns(time)?;
    let name = sig.trim_start_matches("SIG");
    let num = match name {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "ALRM" => libc::SIGALRM,
        "TERM" => libc::SIGTERM,
        other => other
            .parse()
            .ok()
            .filter(|n| (1..=64).contains(n))
            .ok_or_else(|| format!("{s:?}: unknown signal {sig:?} (TERM, INT, KILL, HUP, USR1, USR2, ALRM or 1-64)"))?,
    };
    Ok((at, num))
}
