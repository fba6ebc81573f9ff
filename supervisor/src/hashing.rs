//! The hash maps and sets of the supervisor, keyed by pids, tids,
//! descriptors, futex addresses and the like: hashed with FxHash, not
//! std's SipHash. SipHash guards against keys chosen to collide, which
//! these are not (they come from the kernel and the simulation), and costs
//! tens of nanoseconds a lookup where a step makes a dozen. Nothing
//! iterates one of them in an order that reaches a trace.

/// A `HashMap` with the fast hasher.
pub type HashMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;

/// A `HashSet` with the fast hasher.
pub type HashSet<T> = std::collections::HashSet<T, rustc_hash::FxBuildHasher>;
