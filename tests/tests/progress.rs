//! `[check] progress_within`: liveness. Once the quiet period starts (every
//! fault healed), the history must show a successful operation within the
//! limit, or the seed fails with the check "no progress". Every run is made
//! twice and must give the same verdicts and trace hashes.

use faultline_e2e::paths::scratch_dir;
use faultline_e2e::rpc::{rpc_scenario, Client};
use faultline_e2e::{ScenarioFile, ScenarioRun};

const SEED: u64 = 0x9e55;

/// The rpc client pinging for the whole run with each ping in the history,
/// a reset at 1 s (if `reset`), and progress required within 2 s of the
/// quiet period's start (the last 10 s).
fn progress_scenario(dir_name: &str, flags: &[&str], reset: bool) -> ScenarioRun {
    let mut extra = String::new();
    if reset {
        extra += "\n[[fault]]\nkind = \"reset\"\nbetween = [\"server\"]\nat = \"1s\"\n";
    }
    extra += "\n[faults]\nquiet = \"10s\"\n\n[check]\nprogress_within = \"2s\"\n";
    let client = Client {
        proto: "tcp",
        timeout_ms: 1000,
        count: 100_000,
        flags,
    };
    rpc_scenario(dir_name, SEED, client, &extra)
}

/// A client that stops for good after a reset makes no progress once the
/// faults are over: the seed fails with "no progress" (and nothing else:
/// the client is alive, its history linearizable). One that reconnects
/// passes, and so does the stuck-prone client when nothing resets it.
#[test]
fn progress_within_fails_a_client_that_never_recovers() {
    let run = progress_scenario("progress-hang", &["hang", "history"], true);
    run.expect_code(1);
    let stderr = &run.run.stderr;
    assert!(
        stderr.contains("check \"no progress\" at t=12.000000000s"),
        "\n{run}"
    );
    assert!(
        stderr.contains(
            "no operation succeeded within 2.000000s of the quiet period's start at t=10.000000s"
        ),
        "\n{run}"
    );
    progress_scenario(
        "progress-reconnect",
        &["reconnect", "history", "hang"],
        true,
    )
    .expect_pass();
    progress_scenario("progress-none", &["hang", "history"], false).expect_pass();
}

/// `progress_within` counts from the quiet period: without `[faults] quiet`,
/// or longer than it, the scenario is an error naming the field.
#[test]
fn progress_within_needs_a_quiet_period_it_fits_in() {
    let dir = scratch_dir("progress-bad");
    for (faults, needle) in [
        ("", "set [faults] quiet too"),
        (
            "[faults]\nquiet = \"1s\"\n\n",
            "fit in the quiet period (1.000s)",
        ),
    ] {
        let text = format!(
            "name = \"bad\"\nduration = \"5s\"\n\n[[node]]\nname = \"a\"\ncommand = [\"true\"]\n\n{faults}[check]\nprogress_within = \"3s\"\n"
        );
        let run = ScenarioFile::raw(&dir, "bad.toml", &text).runner().run();
        run.expect_code(2);
        let err = &run.run.stderr;
        assert!(
            err.contains("field `check.progress_within`") && err.contains(needle),
            "{needle:?}\n{run}"
        );
    }
}
