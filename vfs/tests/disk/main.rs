//! Tests of the durability model through the public API, playing the
//! supervisor: each helper performs the real file operation in a temp dir,
//! then reports it to the disk.

mod faults;
mod namespace;
mod persistence;
mod support;
