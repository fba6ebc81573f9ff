//! faultline: deterministic simulation testing for unmodified binaries.

mod auxv;
mod cli;
mod diskstate;
mod duration;
mod exec_cmd;
mod fdprobe;
mod launch;
mod netstate;
mod plan;
mod run_cmd;
mod scenario;
mod seccomp;
mod sockaddr;
mod supervisor;
mod sys;
mod syscalls;
mod trace;
mod tracee;
mod vclock;
mod watchdog;
mod world;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let code = match cli.command {
        cli::Command::Exec(args) => exec_cmd::run(&args),
        cli::Command::Run(args) => run_cmd::run(&args),
    };
    std::process::exit(code);
}
