//! The lease store and one lease holder (`tests/programs/c/lease.c`), the
//! scenario the fault tests and the shrink tests share: the holder makes 40
//! writes under 1 s leases it times by its own `clock` (wall or mono), with
//! no fencing token, so a pause or a backward wall-clock step makes it
//! write after the lease has expired.

use std::path::Path;

use crate::program::Program;
use crate::scenario::ScenarioFile;

/// The scenario `name` in `dir/lease.toml`, with `faults` (TOML) appended.
pub fn lease_file(dir: &Path, name: &str, clock: &str, faults: &str) -> ScenarioFile {
    let lease = Program::c("lease").path();
    let text = format!(
        r#"name = "{name}"
duration = "12s"

[[node]]
name = "store"
command = ["{lease}", "server", "7100"]

[[node]]
name = "holder"
command = ["{lease}", "client", "store", "7100", "{clock}", "40"]
{faults}"#,
        lease = lease.display(),
    );
    ScenarioFile::raw(dir, "lease.toml", &text)
}
