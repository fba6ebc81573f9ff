//! Debian's Chromium, headless, as the judge of the timeline pages: it
//! loads a page, runs its script and gives back the DOM (`--dump-dom`) or a
//! screenshot, in a process group of its own that never outlives the call.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::exec::{collect, drain, kill_group, tail, wait_until};
use crate::paths::scratch_dir;

/// Debian's chromium package.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The browser window, and so the screenshot, in px.
pub const WIDTH: u32 = 1400;
pub const HEIGHT: u32 = 900;

/// Wall-clock limit for one Chromium run; past it its process group is killed.
pub const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

/// How long Chromium's output pipes may stay open after it exited.
const PIPE_GRACE: Duration = Duration::from_secs(10);

/// `path` as a file:// URL (percent-encoding all but unreserved bytes and `/`).
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for &b in path.to_str().expect("scratch paths are UTF-8").as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(char::from(b));
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// Runs Debian's Chromium headless on `page` with `args` and a fresh
/// profile, in its own process group, killed (the whole group) if it takes
/// longer than [`CHROMIUM_TIMEOUT`]. Returns its stdout.
pub fn chromium(page: &Path, args: &[String]) -> Vec<u8> {
    let profile = scratch_dir("timeline-chromium-profile");
    let mut command = Command::new(CHROMIUM);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .args(args)
        .arg(file_url(page))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {CHROMIUM}: {e}"));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let status = wait_until(&mut child, start + CHROMIUM_TIMEOUT);
    // Its helpers (same group) must not outlive it, whether it finished or hung.
    kill_group(&child);
    let _ = child.wait();
    let stderr = collect(&stderr, PIPE_GRACE).unwrap_or_default();
    let stderr = tail(&String::from_utf8_lossy(&stderr), 4000);
    let Some(status) = status else {
        panic!("chromium {args:?} timed out after {CHROMIUM_TIMEOUT:?} (killed)\n{stderr}");
    };
    assert!(status.success(), "chromium {args:?}: {status}\n{stderr}");
    collect(&stdout, PIPE_GRACE)
        .unwrap_or_else(|| panic!("chromium's stdout stayed open\n{stderr}"))
}

/// The opening tags of the `class="lane"` elements of `dom`.
pub fn lane_tags(dom: &str) -> Vec<&str> {
    dom.match_indices("class=\"lane\"")
        .filter_map(|(at, _)| {
            let start = dom[..at].rfind('<')?;
            let end = at + dom[at..].find('>')?;
            Some(&dom[start..=end])
        })
        .collect()
}
