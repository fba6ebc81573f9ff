//! Builds the faultline vDSO (vdso/vdso.c) into an ELF image that the
//! supervisor embeds and copies over each simulated process's vDSO. It is
//! freestanding C built with the system's gcc (installed by scripts/setup).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("vdso");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("faultline-vdso.so");
    for f in ["vdso.c", "vdso.lds", "vdso.map"] {
        println!("cargo:rerun-if-changed=vdso/{f}");
    }
    let arg = |flag: &str, file: &str| format!("{flag}{}", dir.join(file).display());
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()))
        .args([
            "-O2",
            "-fPIC",
            "-shared",
            "-nostdlib",
            "-fno-stack-protector",
            // The channel stub is reached with a `call`, which writes below
            // the stack pointer.
            "-mno-red-zone",
            "-fno-asynchronous-unwind-tables",
            "-fno-unwind-tables",
            "-fcf-protection=none",
            "-Wall",
            "-Wextra",
            "-Werror",
            &arg("-Wl,-T,", "vdso.lds"),
            &arg("-Wl,--version-script=", "vdso.map"),
            "-Wl,--hash-style=both",
            "-Wl,-soname=linux-vdso.so.1",
            "-Wl,--build-id=none",
            "-Wl,--no-undefined",
            "-Wl,-z,norelro",
            "-Wl,-z,noexecstack",
            "-o",
        ])
        .arg(&out)
        .arg(dir.join("vdso.c"))
        .status()
        .expect("faultline needs gcc to build its vDSO (scripts/setup installs it)");
    assert!(status.success(), "building the faultline vDSO failed");
}
