//! A real headless browser (Debian's `chromium`, which `scripts/test`
//! installs) for the pages vx writes or serves: the DOM after the page's
//! scripts ran, and a screenshot with a test of whether anything is drawn.

use std::path::Path;
use std::process::Command;

/// `chromium`, or the `chromium-browser` some systems call it.
#[expect(clippy::disallowed_methods, reason = "the tests start a browser, outside any task")]
pub(crate) fn program() -> &'static str {
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
pub(crate) fn dump_dom(file: &Path) -> String {
    run(&format!("file://{}", file.display()), &["--dump-dom"])
}

/// The DOM of the page at `url` (an `http://` page of `vx dashboard`)
/// once its scripts ran and its requests were answered, without the text
/// of its `<script>` elements: what was drawn, not the code that can draw
/// it (a page whose script spells a label must not pass for showing it).
pub(crate) fn dump_dom_url(url: &str) -> String {
    let dom = run(url, &["--dump-dom"]);
    let mut drawn = String::with_capacity(dom.len());
    let mut rest = dom.as_str();
    while let Some(start) = rest.find("<script") {
        drawn.push_str(&rest[..start]);
        let Some(end) = rest[start..].find("</script>") else { break };
        rest = &rest[start + end + "</script>".len()..];
    }
    drawn.push_str(rest);
    drawn
}

/// A 1280×900 screenshot of the page at `url`, as PNG bytes.
pub(crate) fn screenshot(url: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a screenshot dir");
    let file = dir.path().join("shot.png");
    run(url, &[&format!("--screenshot={}", file.display()), "--window-size=1280,900"]);
    std::fs::read(&file).unwrap_or_else(|e| panic!("chromium wrote no screenshot of {url}: {e}"))
}

/// What a screenshot shows: how many distinct colours, and the share of
/// its pixels that differ from the most common one (the background).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Drawn {
    pub colours: usize,
    pub ink: f64,
}

impl Drawn {
    /// Enough is drawn for a page with text, tables and a chart: a blank
    /// page (or one with a line of text) is not.
    pub(crate) fn is_a_page(&self) -> bool {
        self.colours >= 16 && self.ink >= 0.02
    }
}

/// Decodes a PNG and measures what is drawn on it.
pub(crate) fn drawn(png_bytes: &[u8]) -> Drawn {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a PNG size that fits in memory")];
    let frame = reader.next_frame(&mut buf).expect("a PNG frame");
    let channels = frame.color_type.samples();
    let mut counts: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
    for pixel in buf[..frame.buffer_size()].chunks_exact(channels) {
        *counts.entry(&pixel[..channels.min(3)]).or_default() += 1;
    }
    let total: usize = counts.values().sum();
    let background = counts.values().copied().max().unwrap_or(0);
    Drawn { colours: counts.len(), ink: (total - background) as f64 / total.max(1) as f64 }
}
