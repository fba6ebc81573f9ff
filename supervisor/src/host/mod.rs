//! The host side of supervision: ptrace and process memory, launching a tracee, its seccomp filter, auxv and vDSO (with its time page and the calls injected to map it), Go function lookup, descriptor probes and the watchdog. Nothing here knows the simulation.

pub mod auxv;
pub mod fdpass;
pub mod fdprobe;
pub mod gosym;
pub mod heldfds;
pub mod idle_zstd;
pub mod inject;
pub mod interrupt;
pub mod launch;
pub mod maps;
pub mod notify;
pub mod placement;
pub mod procfds;
pub mod seccomp;
pub mod spawner;
pub mod timepage;
pub mod tracee;
pub mod vdso;
pub mod watchdog;
