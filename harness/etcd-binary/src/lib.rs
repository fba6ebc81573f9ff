//! What the etcd-binary harness's two programs share: the workload client
//! (`etcd-workload`) and the invariant probes (`etcd-probe`) both talk to
//! the members through etcd's v3 gRPC API and take durations on the command
//! line.

pub mod duration;
pub mod member;
