//! The command line (clap derive). Every verb's help teaches by example.

use clap::{Args, Parser, Subcommand};

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
faultline: summary seed=0x... exit=0 vtime=3600.000123s events=N stops=N fast=N trace-hash=0x...\n\
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

/// Options of `faultline check-history`.
#[derive(Debug, Args, Clone)]
pub struct CheckHistoryArgs {
    /// The history file.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,

    /// Its format: json, edn or porcupine (default: detected from the text).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<history::Format>,

    /// Distinct (linearized operations, value) states the search may visit
    /// per key before giving up (exit 3); typical histories need about one
    /// per operation.
    #[arg(long, value_name = "STATES", default_value_t = history::Budget::default().max_states)]
    pub budget: usize,

    /// Also write a self-contained HTML page of the operations per key, as
    /// bars in time, with the violating ones in red.
    #[arg(long, value_name = "OUT")]
    pub html: Option<std::path::PathBuf>,
}

/// Options of `faultline exec`.
#[derive(Debug, Args, Clone)]
pub struct ExecArgs {
    /// Seed for every random choice (scheduling, getrandom, AT_RANDOM): decimal or 0x-hex.
    #[arg(long, default_value = "0", value_parser = parse_seed)]
    pub seed: u64,

    /// Write the event trace as JSON lines (n, t, tid, call, args, ret) to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,

    /// Run twice with the same seed and report the first event where the runs differ.
    #[arg(long)]
    pub check_determinism: bool,

    /// Simulation settings shared with `run`.
    #[command(flatten)]
    pub sim: SimArgs,

    /// Stop after this much virtual time (exit 124), e.g. 10m.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// Send the program a signal at a virtual time, e.g. `--signal-at 5s:TERM`
    /// (repeatable). It arrives at the same point of every run.
    #[arg(long, value_name = "TIME:SIGNAL", value_parser = parse_signal_at)]
    pub signal_at: Vec<(u64, i32)>,

    /// The simulated host the program runs on: its name (uname, /etc/hosts)
    /// and address 127.77.0.1. 127.0.0.1 reaches the host itself.
    #[arg(
        long,
        alias = "hostname",
        default_value = "faultline",
        value_name = "NAME"
    )]
    pub host: String,

    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        value_name = "PROGRAM [ARGS]..."
    )]
    pub command: Vec<String>,
}

/// Settings of the simulated machine, common to `exec` and `run`. They
/// shape a run, so report.json records them whole (a field added here is
/// recorded and reused by `replay` without further code) and `run -j`
/// hands them to its workers.
#[derive(Debug, Args, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SimArgs {
    /// Wall-clock time the program sees at the start (UTC, RFC 3339).
    #[arg(long, default_value = "2025-01-01T00:00:00Z", value_name = "TIME")]
    pub epoch: String,

    /// Number of CPUs the program is told it has (sched_getaffinity; GOMAXPROCS follows).
    #[arg(long, default_value_t = 2)]
    pub cpus: u32,

    /// Virtual time each scheduling step costs (lets clock-polling loops progress).
    #[arg(long, default_value = "1us", value_name = "DURATION")]
    pub step_cost: String,

    /// CPU time a thread may use without a trapped syscall before the
    /// watchdog preempts it (the run is then flagged possibly
    /// non-deterministic); a thread blocked in the kernel is preempted after
    /// three times this of wall time. Long enough for an ordinary burst of
    /// computation (a GC, a compaction); short, because a spin loop waiting
    /// for a thread faultline has stopped costs this much each time.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub spin_limit: String,

    /// Hide the vDSO instead of putting faultline's in each process: every
    /// clock read then costs a ptrace stop. The trace is the same either way;
    /// this is for comparing the two paths and for kernels whose vDSO is too
    /// small for faultline's image (that case falls back by itself).
    #[arg(long)]
    pub no_vdso: bool,

    /// Make the Go runtime's yield (runtime.gosched_m, reached by
    /// runtime.Gosched) a scheduling point: every Go program gets a
    /// breakpoint there, so a loop that yields while it waits for another
    /// thread gives way at the same instruction on every run instead of
    /// spinning until the watchdog preempts it (runtime.GC's wait for the
    /// last sweeper). Off by default: it costs thousands of stops per etcd
    /// seed, and the background sweeper's wait, the common spin, is a
    /// give-way point in every Go program anyway.
    #[arg(long)]
    pub go_yields: bool,

    /// Load faultline's LD_PRELOAD library into dynamically linked programs:
    /// their socket reads and writes (read, write, recv, send, recvfrom,
    /// sendto) and sleeps then reach the supervisor over shared memory
    /// instead of a ptrace stop. The trace is the same either way (the
    /// program does see LD_PRELOAD and FAULTLINE_CHANNEL_FD in its
    /// environment). Static and Go programs (which make raw syscalls) are
    /// not affected. Off by default: where a context switch costs most of a
    /// ptrace stop, as on small VMs, it saves little (README, Performance).
    /// The library is libfaultline_preload.so next to faultline, or
    /// $FAULTLINE_PRELOAD.
    #[arg(long)]
    pub preload: bool,

    /// Every N-th clock read of a process is a scheduling point; the other
    /// reads are answered in place (by faultline's vDSO, without a ptrace
    /// stop). Each read still costs --step-cost, charged at the N-th, so
    /// loops that poll the clock see time move. 1 makes every read a
    /// scheduling point.
    #[arg(long, default_value_t = 64, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub clock_step_every: u32,

    /// Do not pin the supervisor and the program to one host CPU (pinning makes
    /// each ptrace stop about 3x cheaper; the program still sees --cpus CPUs).
    #[arg(long)]
    pub no_pin: bool,

    /// How the next thread is chosen at each scheduling point. `random`: a
    /// uniform seeded choice every time (many short interleavings; the
    /// default). `pct`: probabilistic concurrency testing — each thread gets
    /// a seeded priority, the highest runnable one runs, and at
    /// --pct-depth minus 1 seeded steps among the first --pct-steps the
    /// running thread drops below all others (finds ordering bugs of small
    /// depth with a known probability, with far fewer thread switches). A
    /// thread that runs 100 steps in a row while others wait is lowered too,
    /// so a polling loop cannot starve the rest. Recorded in report.json.
    #[arg(long, value_enum, default_value_t = PolicyName::Random, value_name = "POLICY")]
    pub schedule_policy: PolicyName,

    /// With --schedule-policy pct: the bug depth d (d - 1 priority change points).
    #[arg(long, default_value_t = 3, value_name = "D", value_parser = clap::value_parser!(u32).range(1..))]
    pub pct_depth: u32,

    /// With --schedule-policy pct: the change points are drawn from the first K scheduling steps.
    #[arg(long, default_value_t = 20_000, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub pct_steps: u64,
}

/// `--schedule-policy` values.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PolicyName {
    /// Uniformly random at every scheduling point.
    Random,
    /// Probabilistic concurrency testing (seeded priorities, change points).
    Pct,
}

impl SimArgs {
    /// The scheduling policy these flags select.
    pub fn schedule(&self) -> crate::engine::scheduler::SchedulePolicy {
        use crate::engine::scheduler::SchedulePolicy;
        match self.schedule_policy {
            PolicyName::Random => SchedulePolicy::Random,
            PolicyName::Pct => SchedulePolicy::Pct {
                depth: self.pct_depth,
                steps: self.pct_steps,
            },
        }
    }
}

impl Default for SimArgs {
    /// The flags' defaults (what an old report.json without a setting ran with).
    fn default() -> Self {
        #[derive(Parser)]
        struct Defaults {
            #[command(flatten)]
            sim: SimArgs,
        }
        Defaults::parse_from(["faultline"]).sim
    }
}

/// Options of `faultline run`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// The scenario file (TOML).
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,

    /// Run only this seed (decimal or 0x-hex), e.g. to replay a failure.
    #[arg(long, value_parser = parse_seed, conflicts_with_all = ["seeds", "seed_list", "explore"])]
    pub seed: Option<u64>,

    /// How many seeds to run (default: the file's `seeds`, else 1). The seeds
    /// derive from the scenario name, so every machine runs the same ones.
    #[arg(long, value_parser = parse_seeds)]
    pub seeds: Option<u64>,

    /// Run exactly the seeds listed in FILE: one per line, decimal or 0x-hex,
    /// `#` starts a comment, e.g. the failing seeds of a --results file.
    /// Shards split the list. A line that is not a seed is an error naming
    /// FILE:LINE (exit 2).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["seeds", "explore"])]
    pub seed_list: Option<std::path::PathBuf>,

    /// Derive the seeds from a fresh random base instead of the scenario's
    /// name, so a hunt does not always run the same seeds. The base is
    /// printed with the command that runs the same seeds again:
    /// `--explore=0xBASE` (with shards, pick the base once and give it to
    /// every shard).
    #[arg(long, value_name = "BASE", num_args = 0..=1, require_equals = true,
          default_missing_value = "fresh", value_parser = parse_explore)]
    pub explore: Option<Explore>,

    /// Append one JSON line per seed to FILE: {"scenario", "seed" (0x-hex),
    /// "verdict" ("pass" or "fail"), "check" (the failing check or null),
    /// "wall_s", "trace_hash" (0x-hex)}. Shards and -j children append to
    /// the files they are given; jq turns one into a --seed-list.
    #[arg(long, value_name = "FILE")]
    pub results: Option<std::path::PathBuf>,

    /// Where each seed's artifacts go: DIR/<scenario>/<seed>/.
    #[arg(long, default_value = "runs", value_name = "DIR")]
    pub artifacts: std::path::PathBuf,

    /// Run every seed even after one fails (default: stop at the first failure).
    #[arg(long)]
    pub keep_going: bool,

    /// Run N seeds at a time, each in its own faultline process (N >= 1).
    /// The workers die with this process, even when it is killed.
    #[arg(short = 'j', long = "jobs", default_value_t = 1, value_name = "N", value_parser = parse_jobs)]
    pub jobs: usize,

    /// Wall-clock time one seed may take, e.g. `30s` or `1h` (`0`: no limit).
    /// A node that spins without syscalls never lets virtual time reach the
    /// scenario's duration; such a seed ends with the verdict `stuck`, and
    /// its artifacts are kept like a failure's.
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = crate::scenario::duration::parse_ns)]
    pub seed_timeout: u64,

    /// Run the fault plan recorded in FILE (a seed's faults.json) instead of
    /// planning the faults from each seed: the scenario's random entries
    /// draw nothing, its planned entries are not read, and each event runs
    /// at its recorded time with its recorded parameters (down time, clock
    /// step, ppm, link delays and loss, corrupt glob and bytes). With the
    /// seed that recorded it, the run is the same (same verdict, same trace
    /// hash). The disk-error probabilities and disk bug switches still come
    /// from the scenario. A file that cannot be read, or an entry naming no
    /// node of the scenario, is an error naming the file and the entry (exit 2).
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<std::path::PathBuf>,

    /// Also write the verdicts as JUnit XML to FILE: one test case per seed
    /// (failed ones carry the check and its message), for CI systems that
    /// show test reports, e.g. `--junit results.xml`.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<std::path::PathBuf>,

    /// Do not run a failing seed a second time. By default each failing
    /// seed is run again before it is reported, and its failure block says
    /// "replays: identical" or names the first event where the second run
    /// differs (report.json: `replays`); this flag saves that time.
    #[arg(long, conflicts_with = "check_determinism")]
    pub no_recheck: bool,

    /// Run every seed twice, passing ones too, and compare the traces event
    /// by event: a seed whose runs differ gets the verdict
    /// `nondeterministic` (exit 123), with the first divergent event of
    /// each run (node, thread, call, arguments, result) and the likely
    /// cause (host state read, watchdog preemption, or unknown).
    #[arg(long)]
    pub check_determinism: bool,

    /// Set by `run -j` on the faultline processes it starts, one per seed:
    /// run the seed and keep its artifacts, but leave summary.json and the
    /// verdict line to the parent, so a sharded `-j` run counts each seed once.
    #[arg(long, hide = true)]
    pub seed_worker: bool,

    /// Set by `run -j` on its workers: the parent's simulation settings as
    /// JSON (they replace the flags), so every setting reaches the workers.
    #[arg(long, hide = true, value_name = "JSON")]
    pub worker_settings: Option<String>,

    /// Run only slice I of N of the seeds (seeds whose index modulo N is I),
    /// e.g. `--shard 0/4` on the first of four machines.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "shard_count")]
    pub shard: Option<(u64, u64)>,

    /// Like --shard, with I taken from $JOB_COMPLETION_INDEX (a Kubernetes
    /// Indexed Job or a CI matrix) or, when that is unset, from
    /// $SLURM_ARRAY_TASK_ID minus $SLURM_ARRAY_TASK_MIN (`sbatch --array`);
    /// under Slurm, N must equal $SLURM_ARRAY_TASK_COUNT.
    #[arg(long, value_name = "N")]
    pub shard_count: Option<u64>,

    /// Simulation settings.
    #[command(flatten)]
    pub sim: SimArgs,
}

impl RunArgs {
    /// Which seeds run twice: every one (`--check-determinism`), none
    /// (`--no-recheck`), or the failing ones.
    pub fn recheck(&self) -> crate::cmd::recheck::Recheck {
        use crate::cmd::recheck::Recheck;
        match (self.check_determinism, self.no_recheck) {
            (true, _) => Recheck::Every,
            (false, true) => Recheck::Never,
            (false, false) => Recheck::Failures,
        }
    }
}

/// Where `--explore` takes its seeds from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explore {
    /// A base drawn from the OS (a bare `--explore`).
    Fresh,
    /// A base given (`--explore=0xBASE`), to run an exploration again.
    Base(u64),
}

/// Parses the value of `--explore`: a 0x-hex or decimal base, or `fresh`
/// (what a bare `--explore` means).
fn parse_explore(s: &str) -> Result<Explore, String> {
    match s {
        "fresh" => Ok(Explore::Fresh),
        base => parse_seed(base)
            .map(Explore::Base)
            .map_err(|_| format!("--explore={s}: expected a base seed, e.g. --explore=0x5eed")),
    }
}

/// Parses `--seeds N` with N >= 1.
fn parse_seeds(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("--seeds 0 runs nothing: give 1 or more seeds".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a number of seeds")),
    }
}

/// Parses `-j N` with N >= 1.
fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("-j 0 runs nothing: give 1 or more jobs".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a number of jobs")),
    }
}

/// Parses `I/N` with I < N.
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("shard {s:?}: expected I/N with 0 <= I < N, e.g. 0/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Options of `faultline replay`.
#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// A seed's artifact directory (it holds report.json). It is only read.
    #[arg(value_name = "DIR")]
    pub dir: std::path::PathBuf,

    /// Where the replay's artifacts go (default: the first free DIR/replay-N/).
    #[arg(long, value_name = "OUT")]
    pub artifacts: Option<std::path::PathBuf>,

    /// Wall-clock time the replay may take (as `run --seed-timeout`).
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = crate::scenario::duration::parse_ns)]
    pub seed_timeout: u64,
}

/// Options of `faultline shrink`.
#[derive(Debug, Args, Clone)]
pub struct ShrinkArgs {
    /// A failing seed's artifact directory (it holds report.json and
    /// faults.json). Only DIR/shrink/ and DIR/shrunk.toml are written.
    #[arg(value_name = "DIR")]
    pub dir: std::path::PathBuf,

    /// Most runs of the seed to make, the first (the whole schedule)
    /// included; when they are spent, the fewest faults found so far are
    /// written.
    #[arg(long, default_value_t = 64, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_runs: u64,

    /// Wall-clock time one run may take (as `run --seed-timeout`).
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = crate::scenario::duration::parse_ns)]
    pub seed_timeout: u64,
}

/// Parses a seed: decimal, or hexadecimal with a 0x prefix.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("seed {s:?} is not a decimal or 0x-hex 64-bit number"))
}

/// Parses `TIME:SIGNAL` such as `5s:TERM`, `1500ms:SIGUSR1` or `2s:9`.
pub fn parse_signal_at(s: &str) -> Result<(u64, i32), String> {
    let (time, sig) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: expected TIME:SIGNAL, e.g. 5s:TERM"))?;
    let at = crate::scenario::duration::parse_ns(time)?;
    let name = sig.trim_start_matches("SIG");
    let num = match name {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "ALRM" => libc::SIGALRM,
        "TERM" => libc::SIGTERM,
        other => other
            .parse()
            .ok()
            .filter(|n| (1..=64).contains(n))
            .ok_or_else(|| format!("{s:?}: unknown signal {sig:?} (TERM, INT, KILL, HUP, USR1, USR2, ALRM or 1-64)"))?,
    };
    Ok((at, num))
}
