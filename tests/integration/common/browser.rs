//! A real headless browser (Debian's `chromium`, which `scripts/test`
//! installs) for the pages vx writes: the DOM after the page's scripts ran.

use std::path::Path;
use std::process::Command;

/// `chromium`, or the `chromium-browser` some systems call it.
#[expect(clippy::disallowed_methods, reason = "the tests start a browser, outside any task")]
fn program() -> &'static str {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("no chromium on PATH: install it (`apt-get install chromium`; scripts/test does)")
}

/// Runs headless chromium on `url` with `extra` flags, in a profile of its
/// own; returns its stdout.
#[expect(clippy::disallowed_methods, reason = "the tests start a browser, outside any task")]
fn run(url: &str, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().expect("a browser profile dir");
    let out = Command::new(program())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        // Time enough for the page's scripts, spent only when it is idle.
        .arg("--virtual-time-budget=5000")
        .args(extra)
        .arg(url)
        .output()
        .expect("start chromium");
    assert!(out.status.success(), "chromium failed on {url}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The DOM of the page at `file` once its scripts ran.
pub fn dump_dom(file: &Path) -> String {
    run(&format!("file://{}", file.display()), &["--dump-dom"])
}
