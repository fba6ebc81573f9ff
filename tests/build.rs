//! Tells the e2e tests whether Debian's etcd server is installed: without
//! `/usr/bin/etcd`, `cfg(no_etcd)` is set and the etcd scenario test is
//! compiled as `#[ignore]`d with a message saying why, so `cargo test` lists
//! it as ignored instead of passing it silently.

use std::path::Path;

const ETCD: &str = "/usr/bin/etcd";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_etcd)");
    println!("cargo::rerun-if-changed={ETCD}");
    println!("cargo::rerun-if-changed=build.rs");
    if !Path::new(ETCD).is_file() {
        println!("cargo::rustc-cfg=no_etcd");
    }
}
