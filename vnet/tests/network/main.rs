//! Behaviour of the simulated network through its public API.

mod common;
mod datagram;
mod determinism;
mod faults;
mod hosts;
mod stream;
