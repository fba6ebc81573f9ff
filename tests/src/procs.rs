//! Looking at host processes through /proc: who descends from whom, and
//! whether a process is still alive.

use std::collections::HashMap;
use std::fs;

/// One process as /proc/PID/stat describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcInfo {
    /// Host pid.
    pub pid: u32,
    /// Parent pid.
    pub ppid: u32,
    /// State letter (R, S, D, Z, t, T, X, ...).
    pub state: char,
    /// Start time in clock ticks since boot: with `pid`, identifies the
    /// process across pid reuse.
    pub start_time: u64,
}

impl ProcInfo {
    /// Reads /proc/PID/stat; `None` if there is no such process.
    pub fn read(pid: u32) -> Option<Self> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is in parentheses and may contain spaces or ')'.
        let after_comm = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        // Fields after comm: state(3) ppid(4) ... starttime(22), 1-based in proc(5).
        Some(Self {
            pid,
            ppid: fields.get(1)?.parse().ok()?,
            state: fields.first()?.chars().next()?,
            start_time: fields.get(19)?.parse().ok()?,
        })
    }

    /// True while this very process (same pid and start time) exists and is
    /// not a zombie: it can still run.
    pub fn is_alive(&self) -> bool {
        Self::read(self.pid).is_some_and(|now| {
            now.start_time == self.start_time && !matches!(now.state, 'Z' | 'X' | 'x')
        })
    }
}

/// Every process whose chain of parents leads to `root` (excluding `root`).
pub fn descendants(root: u32) -> Vec<ProcInfo> {
    let mut children: HashMap<u32, Vec<ProcInfo>> = HashMap::new();
    for entry in fs::read_dir("/proc").expect("read /proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(info) = ProcInfo::read(pid) {
            children.entry(info.ppid).or_default().push(info);
        }
    }
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for child in children.remove(&parent).unwrap_or_default() {
            frontier.push(child.pid);
            found.push(child);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn sees_own_child_as_descendant_until_it_is_reaped() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let me = std::process::id();
        let found = descendants(me);
        let info = found
            .iter()
            .find(|p| p.pid == child.id())
            .copied()
            .expect("child listed");
        assert_eq!(info.ppid, me);
        assert!(info.is_alive());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!info.is_alive());
    }
}
