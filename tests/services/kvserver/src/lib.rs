//! Shared code of the `kvserver` and `kvclient` binaries: a crash-test
//! service for faultline (issue 4). The server keeps a write-ahead log in
//! its data directory and acknowledges a put only once it is durable, unless
//! a `--bug` switch makes it cut one of the corners that lose acknowledged
//! writes on a power cut; the client checks that every acknowledged put is
//! still readable after the server crashed and restarted.
//!
//! std only, so the binaries build anywhere and make few, plain syscalls.

pub mod args;
pub mod protocol;
