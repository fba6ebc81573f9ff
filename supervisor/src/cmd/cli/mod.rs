//! The command line (clap derive): the verbs and their help, which teaches
//! by example. Each verb's options live in their own file, the simulation
//! settings `exec` and `run` share in `sim`, and the value parsers of the
//! flags in `values`.

mod exec;
mod run;
mod sim;
mod values;
mod verbs;

pub use exec::ExecArgs;
pub use run::{Explore, RunArgs};
pub use sim::SimArgs;
pub use values::{parse_seed, ValueError};
pub use verbs::{CheckHistoryArgs, ReplayArgs, ShrinkArgs};

use clap::{Parser, Subcommand};

/// faultline runs unmodified binaries in virtual time on a seeded scheduler,
/// so that one seed is one reproducible run.
#[derive(Debug, Parser)]
#[command(
    name = "faultline",
    version,
    about = "Find the bugs in distributed systems before production does",
    long_about = "faultline runs unmodified compiled binaries (C, Rust, Go, etcd) under a \
supervisor that intercepts their clock, thread, file and socket syscalls and serializes \
them onto one seeded virtual-time scheduler. One seed = one reproducible run.",
    after_help = "EXAMPLES:\n  \
faultline exec -- ./myprog --flag          run once, seed 0\n  \
faultline exec --seed 7 -- ./myprog        another interleaving\n  \
faultline exec --check-determinism -- ./myprog   run twice, compare traces\n  \
faultline exec --trace t.jsonl -- /usr/bin/etcd --version\n  \
faultline run cluster.toml --seeds 100 -j 2   a scenario, 100 seeds (see `faultline run --help`)\n  \
faultline replay runs/NAME/SEED              the same run again, checked event by event\n  \
faultline shrink runs/NAME/SEED              the fewest faults that still fail: shrunk.toml\n\n\
EXIT CODES (exec):\n  \
the program's own exit code, or 128+N when signal N killed it;\n  \
2 a bad flag or argument (the message names it);\n  \
123 --check-determinism found the two runs differ;\n  \
124 deadlock (no thread can run, no timer pending) or --timeout reached;\n  \
125 faultline could not run the program (missing binary, a --trace file it cannot write);\n  \
127 the kernel would not execute it (no execute permission, not an executable)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one program (and every thread and child it starts) deterministically.
    #[command(after_help = "EXAMPLES:\n  \
faultline exec -- ./server                    seed 0, output passes through\n  \
faultline exec --seed 0x2a -- ./server        seeds are decimal or 0x-hex\n  \
faultline exec --epoch 2030-06-01T12:00:00Z -- date\n  \
faultline exec --check-determinism --trace run.jsonl -- ./prog\n\n\
At the end faultline prints one line to stderr:\n  \
faultline: summary seed=0x... exit=0 vtime=3600.000123s events=N stops=N fast=N in-stub=N trace-hash=0x...\n\
stops: ptrace stops; fast: calls over the shared-memory channel; in-stub: calls a\n\
Go program's patched runtime answered itself (quiet polls, empty reads).\n\
Two runs of the same seed print the same trace-hash.")]
    Exec(ExecArgs),
    /// Run a multi-node scenario file for one or many seeds.
    #[command(after_help = "EXAMPLES:\n  \
faultline run harness/etcd-binary/etcd3.toml                the file's seeds\n  \
faultline run scenario.toml --seeds 200 -j 2 --keep-going   200 seeds, 2 at a time\n  \
faultline run scenario.toml --seed 0x2f1c6a0e9b1d4c77       one seed again\n  \
faultline run scenario.toml --seeds 400 --shard-count 4     with $JOB_COMPLETION_INDEX set\n  \
faultline run scenario.toml --seeds 400 --shard-count 4     in sbatch --array=0-3 ($SLURM_ARRAY_TASK_ID)\n  \
faultline run scenario.toml --seeds 50 --explore            50 seeds never run before (base printed)\n  \
faultline run scenario.toml --seed-list failing.txt         the seeds of a file, one per line\n  \
faultline run scenario.toml --seeds 100 --results hunt.jsonl   append a JSON line per seed\n  \
faultline run scenario.toml --seeds 50 --junit seeds.xml    JUnit XML for CI, one test per seed\n  \
faultline run scenario.toml --seed-timeout 2m               a seed that spins is `stuck` after 2m\n  \
faultline run scenario.toml --seed 0x2f1c6a0e9b1d4c77 --schedule runs/kv/2f1c6a0e9b1d4c77/faults.json\n  \
                                                            that seed's recorded faults, not planned ones\n\n\
faultline run scenario.toml --seeds 20 --check-determinism  every seed twice, traces compared\n  \
faultline run scenario.toml --seeds 500 --no-recheck        failing seeds are not run a second time\n\n\
A failing seed runs a second time before it is reported: its block says \"replays: identical\", or\n\
names the first event where the runs differ and the likely cause (report.json: replays).\n\n\
MANY MACHINES: each shard writes <artifacts>/<scenario>/summary-shard-I-of-N.json;\n\
`faultline merge DIR...` combines them (README, section Many machines).\n\n\
SCENARIO FILE (every key in the README, section Scenarios):\n  \
name = \"kv\"                 # seeds derive from it\n  \
duration = \"30s\"            # virtual time per seed\n  \
seeds = 10                   # optional default for --seeds\n  \
folder = \"/abs/path\"        # optional: where commands resolve and nodes run (default: the file's)\n  \
[net]                        # optional: delay_min, delay_max, udp_loss\n  \
[disk]                       # optional: metadata = \"posix\" | \"ordered\", size = \"10GiB\",\n  \
                             #   unsynced = \"prefix_torn\" (default) | \"prefix\" | \"subset\" | \"lose_all\":\n  \
                             #   what a crash keeps of unsynced writes (a seeded prefix, its next\n  \
                             #   write maybe torn; a prefix of whole writes; any subset; nothing)\n  \
[[node]]                     # one host per node: 127.77.0.1, .2, ... in file order\n  \
name = \"kv\"\n  \
command = [\"./kvserver\", \"--data\", \"/data/kv\"]   # relative to the file, run in its folder\n  \
data_dir = \"/data/kv\"       # optional: the node's simulated disk\n  \
env = { KEY = \"value\" }    # optional; {node_dir}, {history} are expanded\n  \
restart_on_exit = true       # optional (or reboot_on_exit)\n  \
[[fault]]                    # kind = partition | crash | kill | pause | clock_jump | clock_drift\n  \
kind = \"crash\"              #   | link | reset | disk_full | corrupt | fsync_error | write_error\n  \
every = \"1s\"                #   | lying_fsync | lose_dir_entries (a field a kind does not use is an error)\n  \
min_down = \"10ms\"           # random crash/kill/pause: every, min_down, max_down, max_down_nodes, nodes\n  \
max_down = \"500ms\"          #   (pause also at/until: the window); planned: at, node, down\n  \
# kind = \"kill\"             SIGKILL only: the page cache survives (no crash model)\n  \
# kind = \"pause\"            the node's threads are not scheduled: timers late, peers see silence\n  \
# kind = \"clock_jump\"       node, at, by = \"-2s\" (wall clock only); random: every, nodes, max_by\n  \
# kind = \"clock_drift\"      node, ppm = 50000, at, until (all its clocks, sleeps follow)\n  \
# kind = \"link\"             between, and, at, until, delay_min, delay_max, loss (datagrams\n  \
                             #   lost; TCP segments resent after a timeout: late, never lost),\n  \
                             #   duplicate = 0.01 (datagrams delivered twice)\n  \
# kind = \"reset\"            between, and, at: every TCP connection between the groups gets RST\n  \
# kind = \"disk_full\"        node, at, until: writes fail with ENOSPC\n  \
# kind = \"corrupt\"          node, at, path = \"wal/*.wal\" (glob under data_dir), bytes = 1\n  \
[faults]                     # optional: max_down = 1 (crashed+killed+paused at once, all entries),\n  \
                             #   quiet = \"5s\" (last 5 s: no new faults, all healed), swarm = true\n  \
                             # per node: clock_offset = \"-1.5s\"\n  \
[check]                      # optional: stderr_patterns = [...], command = [...],\n  \
                             #   stderr_ignore = [...] (lines with one of these are no failure),\n  \
                             #   progress_within = \"3s\" (liveness: an ok operation in the history\n  \
                             #   within 3s of the quiet period's start, else check \"no progress\")\n  \
[[invariant]]                # optional: a probe run DURING the seed, on host inv-1, inv-2, ...\n  \
name = \"one leader per term\" # the check's name when it fails\n  \
every = \"500ms\"             # virtual time between runs (first run at 500ms)\n  \
after = [\"crash\", \"partition\"] # optional: also right after these faults (crash, restart,\n  \
                             #   partition, heal, disk_crash, reboot); every or after is needed\n  \
command = [\"./check-leader.sh\"] # relative to the file; exit 0 = holds; it gets FAULTLINE_NODES\n  \
                             #   (n1=127.77.0.1,...), FAULTLINE_VTIME (ns), FAULTLINE_HISTORY\n  \
timeout = \"2s\"              # optional (default 10s): virtual; a slower run fails the seed\n  \
[[pinned]]                   # added by `faultline pin`\n\n\
CHECKS: node exits, invariants (a failing probe stops the seed there), stderr patterns,\n\
linearizability of $FAULTLINE_HISTORY, no progress ([check] progress_within), the checker command.\n\
ARTIFACTS: DIR/<scenario>/<seed>/: report.json, scenario.toml, trace.jsonl.zst (zstdcat it),\n\
faults.json, net.jsonl, timeline.txt, timeline.html, faultline.log (diagnostics),\n\
output.jsonl (when output was written), history.jsonl, <node>.stdout/.stderr, <node>.disk/,\n\
inv-N.stdout/.stderr (every run of probe N); DIR/<scenario>/summary.json.\n\n\
EXIT CODES: 0 every seed passed, 1 a seed failed or was stuck, 2 bad input (also --seeds 0,\n\
-j 0, duration \"0s\"), 123 --check-determinism found a seed whose two runs differ\n\
(verdict nondeterministic), 125 faultline itself failed, 130/143 after SIGINT/SIGTERM (the running\n\
seed's report.json is kept, marked interrupted).")]
    Run(RunArgs),
    /// Run a seed again from its artifact directory and check the run is identical.
    #[command(
        after_help = "EXAMPLES:\n  faultline replay runs/kv/5bc2d63b491424e2                 into runs/kv/5bc2d63b491424e2/replay-1/\n  \
faultline replay runs/kv/5bc2d63b491424e2 --artifacts /tmp/r   into a new directory\n\n\
The recorded directory is never changed. The seed runs with the scenario copy and\n\
the settings report.json recorded, from any working directory: the same check fails\n\
at the same virtual time and event, and faultline compares the trace hash with the\n\
recorded one. If they differ it prints the first divergent event of both traces,\n\
and it warns, naming the file, when a node's binary changed since the run.\n\n\
EXIT CODES: 0 the seed passed, 1 it failed (as recorded), 2 bad input,\n\
3 the replay differs from the recorded run."
    )]
    Replay(ReplayArgs),
    /// Shrink a failing seed's faults to the ones its failure needs.
    #[command(after_help = "EXAMPLES:\n  \
faultline shrink runs/kv/5bc2d63b491424e2                  writes runs/kv/5bc2d63b491424e2/shrunk.toml\n  \
faultline shrink runs/kv/5bc2d63b491424e2 --max-runs 200   try harder\n\n\
The seed's fault schedule (DIR/faults.json: every fault it ran, with its time and\n\
parameters) is run again with faults left out, by delta debugging (ddmin), until no\n\
fault can be removed without the failing check passing (the same check must fail; a\n\
different failure counts as passing). Each attempt prints one line: its number, the\n\
faults it kept, and its result. The first attempt runs the whole schedule and must\n\
give the recorded trace hash. DIR's own artifacts are never changed: attempts run in\n\
DIR/shrink/attempt-N/ and only the last failing one is kept. At the end, DIR/shrunk.toml\n\
is the scenario with its timed [[fault]] entries (random or planned) replaced by the\n\
remaining faults as planned entries (node clock_offset and the disk error rates and\n\
bug switches stay); `faultline run DIR/shrunk.toml --seed SEED` fails the same check.\n\n\
EXIT CODES: 0 shrunk (or nothing to remove) and shrunk.toml written, 2 bad input (DIR is\n\
not a failing seed's artifact directory, or its faults.json is unusable), 125 faultline\n\
itself failed (a run broke, or the whole schedule did not give the recorded run again),\n\
130/143 after SIGINT/SIGTERM.")]
    Shrink(ShrinkArgs),
    /// Pin a seed as a regression: add it to the scenario's [[pinned]] list,
    /// so every `faultline run` of the file runs it first.
    #[command(after_help = "EXAMPLE:\n  faultline pin runs/kv/5bc2d63b491424e2\n\n\
The fix-check loop: the pinned seed fails before the fix, passes after it,\n\
and fails again if the fix is reverted.")]
    Pin {
        /// A seed's artifact directory (it holds report.json).
        #[arg(value_name = "DIR")]
        dir: std::path::PathBuf,
    },
    /// Print the syscall table as the markdown of docs/limitations.md's
    /// "Every system call" section (hidden: for the docs and their test).
    #[command(
        hide = true,
        after_help = "EXAMPLE:\n  faultline syscall-table > /tmp/table.md   # then paste it into docs/limitations.md"
    )]
    SyscallTable,
    /// Render (again) a seed's timeline.html from its artifacts.
    #[command(
        after_help = "EXAMPLE:\n  faultline render runs/kv/5bc2d63b491424e2   # then open .../timeline.html\n\n\
One self-contained page (no network fetches): a lane per node, messages as\n\
arrows, crashes/restarts/partitions/disk crashes marked, zoom and filters,\n\
and the failing check at the end. `faultline run` writes it for every seed."
    )]
    Render {
        /// A seed's artifact directory.
        #[arg(value_name = "DIR")]
        dir: std::path::PathBuf,
    },
    /// Merge the summaries of sharded runs and report the combined verdict.
    #[command(
        after_help = "EXAMPLE:\n  faultline merge shard-0/runs shard-1/runs\n\n\
Reads every <DIR>/<scenario>/summary*.json. EXIT CODES: 0 all passed, 1 a seed failed, 2 bad input."
    )]
    Merge {
        /// Artifact directories of the shards.
        #[arg(value_name = "DIR", required = true)]
        dirs: Vec<std::path::PathBuf>,
    },
    /// Check a recorded history for linearizability, outside any scenario.
    #[command(after_help = "EXAMPLES:\n  \
faultline check-history runs/kv/5bc2d63b491424e2/history.jsonl\n  \
faultline check-history store/history.edn --html history.html   # then open it\n  \
faultline check-history c10-ok.txt --format porcupine --budget 5000000\n\n\
FORMATS (auto-detected, or --format):\n  \
json       faultline's JSON lines: {\"process\": 3, \"op\": \"put\", \"key\": \"k1\", \"value\": \"v1\",\n             \"invoke\": 5800000000, \"complete\": 5810000000, \"outcome\": \"ok\"}\n             ops put get cas delete append read; outcomes ok fail unknown cas_mismatch\n  \
edn        Jepsen's history.edn, register and cas-register: {:process 0, :type :invoke,\n             :f :cas, :value [1 2]} (:read/:write/:cas; keyed values [k v] for many keys;\n             :ok/:fail/:info; a :fail of a cas without :error is a cas_mismatch)\n  \
porcupine  Porcupine's key-value logs: {:process 0, :type :invoke, :f :get, :key \"6\", :value nil}\n             (:get/:put/:append on strings; append concatenates)\n\n\
EXIT CODES: 0 linearizable, 1 not linearizable (the violation is explained),\n\
2 bad input (the message names FILE:LINE), 3 gave up (the --budget ran out).")]
    CheckHistory(CheckHistoryArgs),
}
