//! Fast clocks: faultline's vDSO answers clock reads in-process (C dynamic
//! and static through glibc, Go parsing the vDSO itself), and a run gives the
//! same output and the same trace with it as with every read trapped
//! (`--no-vdso`), while taking far fewer ptrace stops.

use faultline_e2e::checks::{assert_same_on_both_paths, run_twice};
use faultline_e2e::output::word_after;
use faultline_e2e::{per_linkage, Exec, Program, Run};

/// Runs `exec` twice with the vDSO and once without; asserts the three agree
/// on stdout, exit code, events and trace hash. Returns (with, without).
fn same_run_on_both_paths(exec: Exec) -> (Run, Run) {
    let fast = run_twice(&exec);
    let trapped = exec.flag("--no-vdso").run();
    assert_same_on_both_paths(&fast, &trapped, "the vDSO");
    (fast, trapped)
}

/// The stops the vDSO saved: the trapped run must take at least `factor`
/// times as many.
fn assert_fewer_stops(fast: &Run, trapped: &Run, factor: u64) {
    let (a, b) = (fast.summary().stops, trapped.summary().stops);
    assert!(
        a * factor <= b,
        "with the vDSO {a} stops, without {b}: expected {factor}x fewer\n{fast}"
    );
}

fn c_paths_agree(program: Program) {
    let (fast, trapped) = same_run_on_both_paths(Exec::program(program).seed(7));
    // 15k+ clock reads, most answered without a stop.
    assert_fewer_stops(&fast, &trapped, 5);
    let out = fast.out();
    // Each read costs the 1us step, charged 64us at a time at every 64th
    // read: 100us of polling takes two or three such charges.
    let reads: u64 = word_after(out, "polled", "in");
    assert!(
        (64..=192).contains(&reads),
        "polling 100us took {reads} reads\n{fast}"
    );
    assert!(
        out.contains("child "),
        "the forked child read the clock\n{fast}"
    );
    assert_eq!(out.matches("thread ").count(), 3, "{fast}");
}
per_linkage!(c_clock_paths, Program::c("clock_paths"), c_paths_agree);

#[test]
fn go_static_binary_uses_the_vdso_with_the_same_trace() {
    let (fast, trapped) = same_run_on_both_paths(Exec::program(Program::go("clock_reads")).seed(3));
    assert_fewer_stops(&fast, &trapped, 3);
    let polls: u64 = word_after(fast.out(), "total", "polls");
    assert!(polls > 0, "time moved while Go polled it\n{fast}");
}

#[test]
fn every_read_a_scheduling_point_is_the_same_on_both_paths() {
    let exec = Exec::program(Program::c("clock_paths"))
        .seed(2)
        .option("--clock-step-every", "1");
    let (fast, _) = same_run_on_both_paths(exec);
    let reads: u64 = word_after(fast.out(), "polled", "in");
    assert_eq!(reads, 100, "each read costs one 1us step\n{fast}");
}

#[test]
fn another_seed_interleaves_the_readers_differently_on_both_paths() {
    let a = same_run_on_both_paths(Exec::program(Program::c("clock_paths")).seed(11)).0;
    let b = same_run_on_both_paths(Exec::program(Program::c("clock_paths")).seed(12)).0;
    assert_ne!(
        a.summary().trace_hash,
        b.summary().trace_hash,
        "seeds 11 and 12 gave one schedule\n{a}\n{b}"
    );
}

#[test]
fn the_time_page_is_shared_and_a_forked_child_gets_its_own() {
    // The bash builtins read /proc/self/maps in the shell and in a forked
    // subshell, which runs no exec.
    let script = r#"show() { while read -r l; do case $l in *faultline-time*) echo "$1 $l";; esac; done < /proc/self/maps; }
show parent; ( show child ); show parent"#;
    let run = Exec::new("/bin/bash").arg("-c").arg(script).seed(1).run();
    assert_eq!(run.code(), 0, "{run}");
    let inode = |who: &str| -> Vec<String> {
        run.out()
            .lines()
            .filter_map(|l| l.strip_prefix(who))
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                assert_eq!(f[..2], ["00100000-00101000", "rw-s"], "{run}");
                f[4].to_string()
            })
            .collect()
    };
    let (parent, child) = (inode("parent "), inode("child "));
    assert_eq!(parent.len(), 2, "{run}");
    assert_eq!(parent[0], parent[1], "{run}");
    assert_eq!(child.len(), 1, "{run}");
    assert_ne!(
        child[0], parent[0],
        "the child has a page of its own\n{run}"
    );
}
