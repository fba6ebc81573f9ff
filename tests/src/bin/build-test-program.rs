//! Builds one test program (if out of date) and prints the path of the
//! binary, for scripts such as `scripts/bench`.
//!
//! Usage: `build-test-program <c|rust|go> <name> [dynamic|static]`

use std::process::ExitCode;

use faultline_e2e::{Linkage, Program};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (lang, name, linkage) = match args.as_slice() {
        [lang, name] => (lang, name, None),
        [lang, name, linkage] => (lang, name, Some(linkage.as_str())),
        _ => {
            eprintln!("usage: build-test-program <c|rust|go> <name> [dynamic|static]");
            return ExitCode::from(2);
        }
    };
    let name: &'static str = Box::leak(name.clone().into_boxed_str());
    let program = match lang.as_str() {
        "c" => Program::c(name),
        "rust" => Program::rust(name),
        "go" => Program::go(name),
        other => {
            eprintln!("unknown language {other:?}: expected c, rust or go");
            return ExitCode::from(2);
        }
    };
    let program = match linkage {
        None => program,
        Some("dynamic") => program.with_linkage(Linkage::Dynamic),
        Some("static") => program.with_linkage(Linkage::Static),
        Some(other) => {
            eprintln!("unknown linkage {other:?}: expected dynamic or static");
            return ExitCode::from(2);
        }
    };
    if !program.source().is_file() {
        eprintln!("no such test program: {}", program.source().display());
        return ExitCode::from(2);
    }
    println!("{}", program.path().display());
    ExitCode::SUCCESS
}
