//! The simulated world a run holds: threads and processes, the virtual clock, the event trace, and the network and disk adapters over `vnet` and `vfs`.

pub mod cputime;
pub mod diagnostics;
pub mod diskstate;
pub mod fdkind;
pub mod fileids;
pub mod host_probe;
pub mod machine;
pub mod memory;
pub mod netlink;
pub mod netstate;
pub mod output;
pub mod peek;
pub mod pipes;
pub mod poke;
pub mod quiet_scan;
pub mod rlimits;
pub mod scheduler;
pub mod seeds;
pub mod sockaddr;
pub mod state;
pub mod timers;
pub mod trace;
pub mod vclock;
pub mod world;
