//! The resource limits a simulated process sees. The host's limits depend
//! on the machine and on how faultline was started (a CI runner's open-file
//! limit is not a laptop's), and programs size themselves from them (Go
//! raises its open-file limit to the hard one, glibc sizes thread stacks
//! from RLIMIT_STACK). So every process starts from the same fixed table,
//! a fresh Debian login's; a child inherits its parent's; a change the
//! program makes is kept here (`sys::rlimit` also makes it on the host, as
//! far as the host allows, which enforces it).

/// Infinity, as the kernel spells it.
pub const INFINITY: u64 = u64::MAX;

/// The number of resources (RLIMIT_CPU .. RLIMIT_RTTIME).
pub const COUNT: usize = 16;

/// One limit: soft (current) and hard (maximum).
pub type Limit = [u64; 2];

/// The starting limits, by resource number.
const DEFAULTS: [Limit; COUNT] = [
    [INFINITY, INFINITY], // RLIMIT_CPU
    [INFINITY, INFINITY], // RLIMIT_FSIZE
    [INFINITY, INFINITY], // RLIMIT_DATA
    [8 << 20, INFINITY],  // RLIMIT_STACK
    [0, INFINITY],        // RLIMIT_CORE
    [INFINITY, INFINITY], // RLIMIT_RSS
    [63_704, 63_704],     // RLIMIT_NPROC
    [1024, 524_288],      // RLIMIT_NOFILE
    [8 << 20, 8 << 20],   // RLIMIT_MEMLOCK
    [INFINITY, INFINITY], // RLIMIT_AS
    [INFINITY, INFINITY], // RLIMIT_LOCKS
    [63_704, 63_704],     // RLIMIT_SIGPENDING
    [819_200, 819_200],   // RLIMIT_MSGQUEUE
    [0, 0],               // RLIMIT_NICE
    [0, 0],               // RLIMIT_RTPRIO
    [INFINITY, INFINITY], // RLIMIT_RTTIME
];

/// Each resource's line in `/proc/<pid>/limits`: its name and unit.
const NAMES: [(&str, &str); COUNT] = [
    ("Max cpu time", "seconds"),
    ("Max file size", "bytes"),
    ("Max data size", "bytes"),
    ("Max stack size", "bytes"),
    ("Max core file size", "bytes"),
    ("Max resident set", "bytes"),
    ("Max processes", "processes"),
    ("Max open files", "files"),
    ("Max locked memory", "bytes"),
    ("Max address space", "bytes"),
    ("Max file locks", "locks"),
    ("Max pending signals", "signals"),
    ("Max msgqueue size", "bytes"),
    ("Max nice priority", ""),
    ("Max realtime priority", ""),
    ("Max realtime timeout", "us"),
];

/// A process's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rlimits([Limit; COUNT]);

impl Default for Rlimits {
    fn default() -> Self {
        Rlimits(DEFAULTS)
    }
}

impl Rlimits {
    /// The limit of `resource`, if there is such a resource.
    pub fn get(&self, resource: u64) -> Option<Limit> {
        self.0.get(usize::try_from(resource).ok()?).copied()
    }

    /// The text of `/proc/<pid>/limits`, laid out as Linux lays it out.
    pub fn proc_limits(&self) -> String {
        let shown = |v: u64| {
            if v == INFINITY {
                "unlimited".to_string()
            } else {
                v.to_string()
            }
        };
        let mut out = format!(
            "{:<25} {:<20} {:<20} {:<10}\n",
            "Limit", "Soft Limit", "Hard Limit", "Units"
        );
        for ((name, unit), [soft, hard]) in NAMES.iter().zip(self.0) {
            out += &format!("{name:<25} {:<20} {:<20} ", shown(soft), shown(hard));
            if !unit.is_empty() {
                out += &format!("{unit:<10}");
            }
            out.push('\n');
        }
        out
    }

    /// Records a change the program made.
    pub fn set(&mut self, resource: u64, limit: Limit) {
        if let Some(slot) = usize::try_from(resource)
            .ok()
            .and_then(|r| self.0.get_mut(r))
        {
            *slot = limit;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_starts_from_the_fixed_table_and_keeps_its_changes() {
        let mut limits = Rlimits::default();
        assert_eq!(
            limits.get(libc::RLIMIT_NOFILE as u64),
            Some([1024, 524_288])
        );
        assert_eq!(limits.get(COUNT as u64), None);
        limits.set(libc::RLIMIT_NOFILE as u64, [524_288, 524_288]);
        assert_eq!(
            limits.get(libc::RLIMIT_NOFILE as u64),
            Some([524_288, 524_288])
        );
        assert_eq!(
            limits.get(libc::RLIMIT_STACK as u64),
            Some([8 << 20, INFINITY])
        );
    }

    #[test]
    fn proc_limits_lays_the_table_out_as_linux_does() {
        let text = Rlimits::default().proc_limits();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 17);
        assert_eq!(
            lines[0],
            "Limit                     Soft Limit           Hard Limit           Units     "
        );
        assert_eq!(
            lines[8],
            "Max open files            1024                 524288               files     "
        );
        assert_eq!(
            lines[4],
            "Max stack size            8388608              unlimited            bytes     "
        );
        assert_eq!(
            lines[14],
            "Max nice priority         0                    0                    "
        );
    }
}
