//! faultline: deterministic simulation testing for unmodified binaries.

mod artifacts;
mod auxv;
mod channel;
mod checks;
mod cli;
mod clock_reads;
mod diskstate;
mod duration;
mod exec_cmd;
mod fast_path;
mod fdprobe;
mod launch;
mod merge_cmd;
mod netlink;
mod netstate;
mod parallel;
mod plan;
mod replay_cmd;
mod run_cmd;
mod scenario;
mod seccomp;
mod sockaddr;
mod supervisor;
mod sys;
mod syscalls;
mod timeline;
mod trace;
mod tracee;
mod vclock;
mod vdso;
mod watchdog;
mod world;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let code = match cli.command {
        cli::Command::Exec(args) => exec_cmd::run(&args),
        cli::Command::Run(args) => run_cmd::run(&args),
        cli::Command::Replay(args) => replay_cmd::replay(&args),
        cli::Command::Pin { dir } => replay_cmd::pin(&dir),
        cli::Command::Merge { dirs } => merge_cmd::merge(&dirs),
        cli::Command::Render { dir } => match timeline::render(&dir) {
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
