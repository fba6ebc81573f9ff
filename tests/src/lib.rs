//! End-to-end test support for faultline.
//!
//! The tests in `tests/tests/` run real C, Rust and Go programs (sources in
//! `tests/programs/`) under the `faultline exec` supervisor and assert on what
//! they print. This library builds those programs on demand ([`Program`]),
//! runs faultline with a wall-clock kill timeout ([`Exec`], [`Run`]), parses
//! its summary line ([`Summary`]) and trace files ([`trace`]), writes and runs
//! multi-node scenarios and reads their artifacts ([`scenario`]), and offers
//! the assertions shared by many tests ([`checks`]), and runs the commands
//! documented in markdown files ([`console`]).
//!
//! The binary under test is `<target>/release/faultline`, or `$FAULTLINE_BIN`.

pub mod browser;
pub mod checks;
pub mod console;
pub mod exec;
pub mod fault_log;
pub mod kv;
pub mod lease;
pub mod output;
pub mod paths;
pub mod procs;
pub mod program;
pub mod rpc;
pub mod runner;
pub mod scenario;
pub mod shards;
pub mod slurm;
pub mod summary;
pub mod trace;

pub use exec::{Exec, Run};
pub use program::{Lang, Linkage, Program};
pub use scenario::{Node, Partition, RunScenario, Scenario, ScenarioFile, ScenarioRun};
pub use summary::{NodeOutcome, SeedReport, Summary};

/// Unix time of faultline's default epoch, 2025-01-01T00:00:00Z.
pub const DEFAULT_EPOCH: i64 = 1_735_689_600;

/// How far past the epoch a program's first clock reading may be: start-up
/// takes (almost) no virtual time, but faultline may charge a fixed cost per
/// syscall.
pub const STARTUP_SLACK_SECS: i64 = 5;

/// Defines a test module with one `#[test]` per linkage (`dynamic` and
/// `static_`) of a C or Rust program, both calling the same body.
///
/// ```text
/// fn clocks_at_epoch(program: Program) { /* ... */ }
/// per_linkage!(c_clocks, Program::c("clocks"), clocks_at_epoch);
/// ```
#[macro_export]
macro_rules! per_linkage {
    ($module:ident, $program:expr, $body:path) => {
        mod $module {
            use super::*;

            #[test]
            fn dynamic() {
                $body(($program).with_linkage($crate::Linkage::Dynamic));
            }

            #[test]
            fn static_() {
                $body(($program).with_linkage($crate::Linkage::Static));
            }
        }
    };
}
