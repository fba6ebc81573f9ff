//! The test programs under `tests/programs/` and how to build them.
//!
//! [`Program::path`] compiles a program into `<target>/test-programs/` the
//! first time it is needed and whenever its sources or build command change
//! (tracked by a stamp file next to the binary). Builds are serialized within
//! the process by a mutex and across processes by a lock file, and each
//! binary is written under a temporary name and renamed into place, so
//! concurrent test binaries never see a half-written program.

use std::collections::hash_map::DefaultHasher;
use std::ffi::OsString;
use std::fs::{self, File};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::paths::{target_dir, workspace_root};

/// Source language of a test program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// C, compiled by gcc against glibc with pthreads.
    C,
    /// Rust, std only, compiled by `rustc -O`.
    Rust,
    /// Go, stdlib only, compiled by Debian's Go 1.19 without cgo.
    Go,
}

impl Lang {
    /// Directory name of the language under `tests/programs/` and
    /// `<target>/test-programs/`.
    pub const fn dir(self) -> &'static str {
        match self {
            Lang::C => "c",
            Lang::Rust => "rust",
            Lang::Go => "go",
        }
    }
}

/// How a program is linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// Dynamically linked against glibc (loaded by ld.so).
    Dynamic,
    /// Statically linked (`-static`, `+crt-static`; Go without cgo always is).
    Static,
}

/// One test program: `tests/programs/<lang>/<name>.<ext>` built with a linkage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// Source language.
    pub lang: Lang,
    /// File stem of the source, e.g. `"clocks"`.
    pub name: &'static str,
    /// Linkage of the built binary.
    pub linkage: Linkage,
}

impl Program {
    /// The dynamically linked build of `tests/programs/c/<name>.c`.
    pub const fn c(name: &'static str) -> Self {
        Self {
            lang: Lang::C,
            name,
            linkage: Linkage::Dynamic,
        }
    }

    /// The dynamically linked build of `tests/programs/rust/<name>.rs`.
    pub const fn rust(name: &'static str) -> Self {
        Self {
            lang: Lang::Rust,
            name,
            linkage: Linkage::Dynamic,
        }
    }

    /// The (static, cgo-free) build of `tests/programs/go/<name>.go`.
    pub const fn go(name: &'static str) -> Self {
        Self {
            lang: Lang::Go,
            name,
            linkage: Linkage::Static,
        }
    }

    /// The same program with another linkage. Go programs only build static.
    pub const fn with_linkage(self, linkage: Linkage) -> Self {
        Self { linkage, ..self }
    }

    /// The program's source file.
    pub fn source(&self) -> PathBuf {
        let ext = match self.lang {
            Lang::C => "c",
            Lang::Rust => "rs",
            Lang::Go => "go",
        };
        programs_dir()
            .join(self.lang.dir())
            .join(format!("{}.{ext}", self.name))
    }

    /// Where the built binary goes: `<target>/test-programs/<lang>/<name>[-static]`.
    pub fn binary(&self) -> PathBuf {
        let suffix = match (self.lang, self.linkage) {
            (Lang::Go, _) | (_, Linkage::Dynamic) => "",
            (_, Linkage::Static) => "-static",
        };
        build_dir()
            .join(self.lang.dir())
            .join(format!("{}{suffix}", self.name))
    }

    /// The built binary, compiling it first if it is missing or out of date.
    ///
    /// Panics with the compiler's output if the build fails.
    pub fn path(&self) -> PathBuf {
        static IN_PROCESS: Mutex<()> = Mutex::new(());
        let _guard = IN_PROCESS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        fs::create_dir_all(build_dir()).expect("create test-programs dir");
        let lock = File::create(build_dir().join(".lock")).expect("create build lock file");
        lock.lock().expect("lock build lock file");

        let binary = self.binary();
        let stamp_path = binary.with_extension("stamp");
        let tmp = binary.with_extension(format!("tmp{}", std::process::id()));
        let stamp = self.stamp();
        if binary.exists() && fs::read_to_string(&stamp_path).ok().as_deref() == Some(&stamp) {
            return binary;
        }
        fs::create_dir_all(binary.parent().unwrap()).expect("create program output dir");
        let mut command = self.build_command(&tmp);
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("cannot run the compiler for {self:?} ({command:?}): {e}"));
        if !output.status.success() {
            let _ = fs::remove_file(&tmp);
            panic!(
                "building {self:?} failed ({}):\n{command:?}\n{}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        fs::rename(&tmp, &binary).expect("move built program into place");
        fs::write(&stamp_path, stamp).expect("write build stamp");
        binary
    }

    /// The compiler invocation that writes this program to `out`.
    fn build_command(&self, out: &Path) -> Command {
        let source = self.source();
        let mut command;
        match self.lang {
            Lang::C => {
                command = Command::new(tool("CC", "gcc"));
                command.args(["-O2", "-g", "-Wall", "-Wextra", "-Werror", "-pthread"]);
                command.arg("-I").arg(programs_dir().join(Lang::C.dir()));
                if self.linkage == Linkage::Static {
                    command.arg("-static");
                }
                command.arg("-o").arg(out).arg(&source);
            }
            Lang::Rust => {
                command = Command::new(tool("RUSTC", "rustc"));
                command.args(["-O", "--edition", "2021"]);
                if self.linkage == Linkage::Static {
                    command.args(["-C", "target-feature=+crt-static"]);
                }
                command.arg("-o").arg(out).arg(&source);
            }
            Lang::Go => {
                assert_eq!(
                    self.linkage,
                    Linkage::Static,
                    "Go test programs are built static only"
                );
                command = Command::new(tool("FAULTLINE_GO", "/usr/lib/go-1.19/bin/go"));
                command
                    .env("GO111MODULE", "off")
                    .env("GOFLAGS", "")
                    .env("CGO_ENABLED", "0")
                    .env("GOCACHE", target_dir().join("go-cache"))
                    .env("GOPATH", target_dir().join("go-path"));
                command.arg("build").arg("-o").arg(out).arg(&source);
            }
        }
        command
    }

    /// A fingerprint of everything the build depends on: the command line
    /// and environment (with a placeholder output path) and the sources.
    fn stamp(&self) -> String {
        let command = self.build_command(Path::new("OUT"));
        let mut hasher = DefaultHasher::new();
        command.get_program().hash(&mut hasher);
        for arg in command.get_args() {
            arg.hash(&mut hasher);
        }
        for (key, value) in command.get_envs() {
            (key, value).hash(&mut hasher);
        }
        for file in self.inputs() {
            fs::read(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()))
                .hash(&mut hasher);
        }
        format!("{:016x}\n", hasher.finish())
    }

    /// Source files the build reads: the program, plus the C headers for C.
    fn inputs(&self) -> Vec<PathBuf> {
        let mut files = vec![self.source()];
        if self.lang == Lang::C {
            let dir = programs_dir().join(Lang::C.dir());
            let mut headers: Vec<PathBuf> = fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
                .map(|entry| entry.expect("read dir entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "h"))
                .collect();
            headers.sort();
            files.extend(headers);
        }
        files
    }
}

/// `tests/programs/` in the workspace.
pub fn programs_dir() -> PathBuf {
    workspace_root().join("tests").join("programs")
}

/// `<target>/test-programs/`, where built programs go.
pub fn build_dir() -> PathBuf {
    target_dir().join("test-programs")
}

/// A tool named by environment variable `var`, else `default`.
fn tool(var: &str, default: &str) -> OsString {
    std::env::var_os(var).unwrap_or_else(|| default.into())
}
