//! timeline.html (issue 5): `faultline render DIR` turns a failing seed's
//! artifacts into one self-contained page, and Debian's Chromium, headless,
//! shows it: its DOM has a lane per node (named by `data-node`) and the
//! failure message in `#failure`, and its screenshot is a full-size picture
//! with the lanes and the red failure marks in it.
//!
//! The failing seed comes from the kvserver service with its `no-dir-fsync`
//! bug under random crashes (as in `disk.rs`): the client loses an
//! acknowledged put and exits 2.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;

use faultline_e2e::browser::{chromium, lane_tags, CHROMIUM, HEIGHT, WIDTH};
use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::exec::{run_command, tail, DEFAULT_TIMEOUT};
use faultline_e2e::kv::KvScenario;
use faultline_e2e::paths::{faultline_bin, scratch_dir};
use faultline_e2e::{Program, ScenarioFile};

/// The page's lane backgrounds (`.lane-bg` and `.lane-bg.alt`) and the red of
/// its failure marks, as RGB.
const LANE_COLORS: [[u8; 3]; 2] = [[0xe8, 0xf0, 0xfc], [0xf3, 0xf7, 0xfd]];
const FAIL_RED: [u8; 3] = [0xd6, 0x27, 0x28];

/// Writes the kv scenario (see `faultline_e2e::kv`) with the server's
/// `no-dir-fsync` bug.
fn buggy_kv_scenario(dir: &Path) -> ScenarioFile {
    let text = KvScenario {
        bug: Some("no-dir-fsync"),
        ..KvScenario::rust("kv-timeline")
    }
    .toml(dir);
    ScenarioFile::raw(dir, "kv.toml", &text)
}

/// Runs the buggy scenario for up to 5 seeds and returns the failing seed's
/// artifact directory and its report.json.
fn failing_seed(dir: &Path) -> (PathBuf, serde_json::Value) {
    let run = buggy_kv_scenario(dir).runner().seeds(5).run();
    run.expect_code(1);
    let failed = run.first_failure("no FAIL verdict");
    let seed_dir = run.seed_dir(failed.seed);
    let report = seed_dir.join("report.json");
    let text = fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}\n{run}", report.display()));
    let report = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}):\n{text}", report.display()));
    (seed_dir, report)
}

/// Words that, before a quote, `(` or `=` and a URL, make a browser fetch it.
const FETCHING: [&str; 10] = [
    "src", "srcset", "href", "action", "poster", "data", "url", "import", "from", "fetch",
];

/// The `http(s)://` references of `html` that a browser would fetch: those
/// in src, href, url(...), import or fetch (see [`FETCHING`]). Plain text
/// may name URLs.
fn network_references(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    for scheme in ["http://", "https://"] {
        for (at, _) in lower.match_indices(scheme) {
            let prefix = &lower[..at];
            let opened = prefix.ends_with(['"', '\'', '(', '=']);
            let word = prefix.trim_end_matches(['"', '\'', '(', '=', ' ', '\t', '\n', '\r']);
            if opened && FETCHING.iter().any(|w| word.ends_with(w)) {
                let context = html.get(at.saturating_sub(20)..(at + 80).min(html.len()));
                found.push(context.unwrap_or(scheme).to_owned());
            }
        }
    }
    found
}

/// The text of the element of `dom` whose opening tag holds `attr`
/// (e.g. `id="failure"`), tags removed and entities decoded.
fn element_text(dom: &str, attr: &str) -> Option<String> {
    let open = dom[..dom.find(attr)?].rfind('<')?;
    let name: String = dom[open + 1..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    let (opening, closing) = (format!("<{name}"), format!("</{name}>"));
    let mut depth = 0usize;
    let mut at = open;
    let end = loop {
        let next_open = dom[at + 1..].find(&opening).map(|i| i + at + 1);
        let next_close = dom[at + 1..].find(&closing).map(|i| i + at + 1)?;
        match next_open {
            Some(o) if o < next_close => (depth, at) = (depth + 1, o),
            _ if depth == 0 => break next_close,
            _ => (depth, at) = (depth - 1, next_close),
        }
    };
    let mut text = String::new();
    let mut in_tag = false;
    for c in dom[open..end].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    Some(decode_entities(&text))
}

/// `text` with the entities Chromium's serializer writes decoded.
fn decode_entities(text: &str) -> String {
    [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&nbsp;", "\u{a0}"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text.to_owned(), |t, (entity, c)| t.replace(entity, c))
}

/// The PNG at `path` as (width, height, RGB pixels).
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = File::open(path).unwrap_or_else(|e| panic!("no screenshot {}: {e}", path.display()));
    let mut reader = png::Decoder::new(BufReader::new(file))
        .read_info()
        .unwrap_or_else(|e| panic!("{} is not a PNG: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader
        .next_frame(&mut buf)
        .unwrap_or_else(|e| panic!("cannot decode {}: {e}", path.display()));
    let channels = match (info.color_type, info.bit_depth) {
        (png::ColorType::Rgb, png::BitDepth::Eight) => 3,
        (png::ColorType::Rgba, png::BitDepth::Eight) => 4,
        other => panic!("{}: unexpected PNG format {other:?}", path.display()),
    };
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

/// Renders the failing seed, checks the page is self-contained, and checks
/// what Chromium makes of it: the DOM and a screenshot.
#[test]
fn render_draws_a_lane_per_node_and_the_failure_in_chromium() {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: scripts/setup installs Debian's chromium package"
    );
    let scratch = scratch_dir("timeline");
    let (dir, report) = failing_seed(&scratch);
    let page = dir.join("timeline.html");
    let _ = fs::remove_file(&page);
    let mut render = Command::new(faultline_bin());
    render.arg("render").arg(&dir);
    let run = run_command(render, DEFAULT_TIMEOUT);
    run.expect_code(0);
    let html = fs::read_to_string(&page)
        .unwrap_or_else(|e| panic!("render made no {}: {e}\n{run}", page.display()));
    assert_eq!(
        network_references(&html),
        Vec::<String>::new(),
        "the page fetches from the network"
    );
    for external in ["<script src", "<link", "<iframe"] {
        assert!(
            !html.contains(external),
            "the page loads a resource ({external}...)"
        );
    }

    let nodes: Vec<&str> = report["nodes"]
        .as_array()
        .expect("report.json has nodes")
        .iter()
        .map(|n| n["name"].as_str().expect("a node has a name"))
        .collect();
    let message = report["failure"]["message"]
        .as_str()
        .expect("the failing seed's report.json has a failure message");

    let dom = chromium(&page, &["--dump-dom".into()]);
    let dom = String::from_utf8_lossy(&dom);
    let lanes = lane_tags(&dom);
    assert_eq!(
        lanes.len(),
        nodes.len(),
        "one lane per node {nodes:?}: {lanes:?}"
    );
    for node in &nodes {
        let tag = format!("data-node=\"{node}\"");
        assert_eq!(
            lanes.iter().filter(|l| l.contains(&tag)).count(),
            1,
            "no lane for node {node}: {lanes:?}"
        );
    }
    let failure = element_text(&dom, "id=\"failure\"").unwrap_or_else(|| {
        panic!(
            "no id=\"failure\" element in the DOM:\n{}",
            tail(&dom, 4000)
        )
    });
    assert!(
        failure.contains(message),
        "#failure says {failure:?}, not {message:?}"
    );

    let shot = scratch.join("timeline.png");
    chromium(&page, &[format!("--screenshot={}", shot.display())]);
    let (width, height, pixels) = decode_png(&shot);
    assert_eq!((width, height), (WIDTH, HEIGHT), "screenshot size");
    let count = |wanted: &[[u8; 3]]| pixels.iter().filter(|p| wanted.contains(p)).count();
    let inked = pixels.len() - count(&[[255, 255, 255]]);
    let lane = count(&LANE_COLORS);
    let red = count(&[FAIL_RED]);
    let colours = pixels.iter().collect::<HashSet<_>>().len();
    eprintln!(
        "screenshot {}: {colours} colours, {inked} non-white, {lane} lane, {red} failure-red px",
        shot.display()
    );
    assert!(inked * 10 > pixels.len(), "the screenshot is almost blank");
    assert!(colours >= 64, "the screenshot has only {colours} colours");
    assert!(lane * 50 > pixels.len(), "no lanes in the screenshot");
    assert!(red > 500, "no red failure marks in the screenshot");
}

/// The page checks themselves: fetches are told from text, and an
/// element's text spans its nested elements.
#[test]
fn page_checks_tell_fetches_from_text_and_read_nested_elements() {
    let fetches = r#"<img src="https://a/x.png"><style>b { background: url('http://b/y') }</style>
        <script>import z from "https://c/z.js"; fetch("http://d/")</script>"#;
    assert_eq!(network_references(fetches).len(), 4, "{fetches}");
    let text = r#"<p>see http://example.org/ and "from http://f/"</p><script>const m = "src=\"http://e/\"";</script>"#;
    assert_eq!(network_references(text), Vec::<String>::new());
    let dom = r#"<div><div id="failure"><div class="what">check</div> a &lt;b&gt; &amp; c</div><div>after</div></div>"#;
    assert_eq!(
        element_text(dom, "id=\"failure\"").as_deref(),
        Some("check a <b> & c")
    );
    assert_eq!(element_text(dom, "id=\"missing\""), None);
}

/// The JSON data embedded in a rendered page.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script id=\"data\" type=\"application/json\">";
    let start = html.find(open).expect("the page embeds its data") + open.len();
    let end = start + html[start..].find("</script>").expect("the data ends");
    serde_json::from_str(&html[start..end]).expect("the embedded data is JSON")
}

/// The page data's rows (arrays) whose element `at` is `value`.
fn rows_with<'a>(
    rows: &'a serde_json::Value,
    at: usize,
    value: &str,
) -> Vec<&'a serde_json::Value> {
    rows.as_array()
        .expect("a list of rows")
        .iter()
        .filter(|r| r[at] == value)
        .collect()
}

/// A server that says hello on stdout and stderr, exits after 0.5 s and is
/// rebooted and restarted each time, and a client that logs, then records
/// a history in which a get misses an acknowledged put. The page draws the
/// client's operations as bars on its lane with the two the violation names
/// highlighted, every node's log lines on its lane at the time they were
/// written, the reboots with their own mark, legend entry and down-time
/// shading, and Chromium runs its script without an error. An echo pair on
/// a slow network (300-400 ms per message) has its long-held messages drawn
/// as stubs at both ends, not as lines across the lanes.
#[test]
fn the_page_draws_operations_logs_and_reboots_without_script_errors() {
    let dir = scratch_dir("timeline-lanes");
    let history = r#"printf '%s\n' '{"process":1,"op":"put","key":"k1","value":"v1","invoke":100000001000,"complete":101000000000,"outcome":"ok"}' '{"process":2,"op":"get","key":"k1","value":null,"invoke":102000000000,"complete":102000000100,"outcome":"ok"}' >> "$FAULTLINE_HISTORY""#;
    let client = format!("echo 'client: start'; sleep 1; {history}; echo 'client: done'");
    let server = "echo 'server: up'; echo 'server: warming' >&2; sleep 0.5; exit 0";
    let (echo, talker) = (
        Program::c("epoll_echo").path(),
        Program::c("echo_client").path(),
    );
    let text = format!(
        r#"name = "timeline-lanes"
duration = "3s"

[net]
delay_min = "300ms"
delay_max = "400ms"

[[node]]
name = "server"
command = ["/bin/sh", "-c", {server:?}]
restart_on_exit = true
reboot_on_exit = true

[[node]]
name = "client"
command = ["/bin/sh", "-c", {client:?}]

[[node]]
name = "echo"
command = ["{echo}", "7000", "1"]

[[node]]
name = "talker"
command = ["{talker}", "echo", "7000", "t", "2"]
"#,
        echo = echo.display(),
        talker = talker.display(),
    );
    let file = ScenarioFile::raw(&dir, "lanes.toml", &text);
    let run = run_scenario_twice(&file.runner().seed(3));
    run.expect_code(1);
    let seed_dir = run.seed_dir(3);
    let page = seed_dir.join("timeline.html");
    let html = fs::read_to_string(&page).unwrap_or_else(|e| panic!("no page: {e}\n{run}"));
    let data = page_data(&html);
    let failure = &data["report"]["failure"];
    assert_eq!(failure["check"], "linearizable", "{failure}");
    assert_eq!(
        failure["operations"],
        serde_json::json!([0, 1]),
        "{failure}"
    );

    // [invoke, complete, lane, process, what, outcome, index]; client is lane 1.
    let ops = &data["ops"];
    assert_eq!(
        ops,
        &serde_json::json!([
            [1000, 1_000_000_000u64, 1, 1, "put k1=\"v1\"", "ok", 0],
            [
                2_000_000_000u64,
                2_000_000_100u64,
                1,
                2,
                "get k1 -> nothing",
                "ok",
                1
            ]
        ]),
        "{ops}"
    );

    // [t, lane, stream, text]: stamped with the virtual time of the write.
    let logs = &data["logs"];
    let at = |text: &str| -> Vec<u64> {
        rows_with(logs, 3, text)
            .iter()
            .map(|r| r[0].as_u64().expect("a time"))
            .collect()
    };
    let up = rows_with(logs, 3, "server: up");
    assert!(
        up.len() >= 4,
        "the server said hello only {} time(s): {logs}",
        up.len()
    );
    assert!(up.iter().all(|r| r[1] == 0 && r[2] == "stdout"), "{logs}");
    let warming = rows_with(logs, 3, "server: warming");
    assert!(
        warming.iter().all(|r| r[1] == 0 && r[2] == "stderr"),
        "{logs}"
    );
    let ups = at("server: up");
    assert!(
        ups.windows(2).all(|w| w[1] >= w[0] + 500_000_000),
        "the restarts' hellos are not 0.5 s apart: {ups:?}"
    );
    let (start, done) = (at("client: start"), at("client: done"));
    assert_eq!((start.len(), done.len()), (1, 1), "{logs}");
    assert!(
        start[0] < 1_000_000_000 && done[0] >= 1_000_000_000,
        "{start:?} {done:?}"
    );

    let reboots: Vec<&serde_json::Value> = data["faults"]
        .as_array()
        .expect("faults")
        .iter()
        .filter(|f| f["kind"] == "reboot" && f["node"] == "server")
        .collect();
    assert!(reboots.len() >= 3, "{}", data["faults"]);

    let dom = chromium(&page, &["--dump-dom".into()]);
    let dom = String::from_utf8_lossy(&dom);
    let body = &dom[dom.find("<body").expect("a body")..];
    let body_tag = &body[..body.find('>').expect("the body tag ends")];
    assert!(
        body_tag.contains("data-rendered=\"ok\"") && !body_tag.contains("data-js-errors"),
        "the page's script did not finish: {body_tag}\n{}",
        element_text(&dom, "id=\"js-errors\"").unwrap_or_default()
    );
    for legend in [
        "reboot",
        "rebooting",
        "op-ok",
        "op-violation",
        "log",
        "exit",
    ] {
        assert!(
            dom.contains(&format!("data-legend=\"{legend}\"")),
            "no legend entry {legend}"
        );
    }
    assert!(
        dom.contains("class=\"op ok violation\""),
        "no highlighted operation bar"
    );
    assert!(dom.contains("class=\"log stdout\""), "no stdout log tick");
    assert!(dom.contains("data-kind=\"reboot\""), "no reboot mark");
    assert!(
        dom.contains("class=\"rebooting\""),
        "no reboot down-time shading"
    );
    let slow = data["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m[1].as_u64() >= m[0].as_u64().map(|sent| sent + 300_000_000))
        .count();
    assert!(slow > 0, "no slow message: {}", data["messages"]);
    assert!(
        dom.contains("class=\"msg held\""),
        "a long-held message is drawn across the lanes"
    );
    let log_table = element_text(&dom, "id=\"logs\"").expect("a log table");
    assert!(log_table.contains("client: done"), "{log_table}");
}
