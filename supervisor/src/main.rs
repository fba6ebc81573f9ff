//! faultline: deterministic simulation testing for unmodified binaries.

mod cmd;
mod engine;
mod fast_path;
mod hashing;
mod host;
mod path_error;
mod report;
mod scenario;
#[cfg(test)]
mod scratch;
mod sim;
mod sys;

use clap::Parser;

fn main() {
    let cli = cmd::cli::Cli::parse();
    let code = match cli.command {
        cmd::cli::Command::Exec(args) => cmd::exec::run(&args),
        cmd::cli::Command::Run(args) => cmd::run::run(&args),
        cmd::cli::Command::Replay(args) => cmd::replay::replay(&args),
        cmd::cli::Command::Pin { dir } => cmd::replay::pin(&dir),
        cmd::cli::Command::Shrink(args) => cmd::shrink::shrink(&args),
        cmd::cli::Command::Merge { dirs } => cmd::merge::merge(&dirs),
        cmd::cli::Command::CheckHistory(args) => cmd::check_history::run(&args),
        cmd::cli::Command::SyscallTable => {
            print!("{}", sys::table::markdown());
            0
        }
        cmd::cli::Command::Render { dir } => match report::timeline::render(&dir) {
            Ok(page) => {
                eprintln!("faultline: wrote {}", page.display());
                0
            }
            Err(e) => {
                eprintln!("faultline: error: {e}");
                2
            }
        },
    };
    std::process::exit(code);
}
