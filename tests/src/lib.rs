//! Helper processes for the integration tests (see `src/bin/`): small
//! programs that fork, ignore signals or leave their session, so the guard
//! can be tested against real processes. What they share lives here.

use std::path::Path;
use std::time::{Duration, Instant};

/// How long a helper process lives at most, so that a failed test cannot
/// leave one running for ever.
pub const LIFETIME: Duration = Duration::from_secs(300);

/// Writes `pids`, one a line, to `path` at once (a temporary file renamed
/// into place), so a reader never sees a partial list.
pub fn write_pids(path: &Path, pids: &[i32]) {
    let text: String = pids.iter().map(|p| format!("{p}\n")).collect();
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("write {}: {e}", tmp.display()));
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("rename to {}: {e}", path.display()));
}

/// Appends `line` and a newline to the log at `path` in one `write`.
/// Helpers and tasks share a log (the shell's `>>` is `O_APPEND` too);
/// `writeln!` would write the pieces of its format one call each, so a
/// task's line could land between `api` and ` ready`.
pub fn append_line(path: &Path, line: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    file.write_all(format!("{line}\n").as_bytes()).unwrap_or_else(|e| panic!("append to {}: {e}", path.display()));
}

/// Sleeps out the rest of [`LIFETIME`], then exits 0.
pub fn sleep_out() -> ! {
    std::thread::sleep(LIFETIME);
    std::process::exit(0)
}

/// Waits (bounded) until `path` exists; whether it does.
pub fn wait_for_file(path: &Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while !path.exists() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// The calling process's PID.
pub fn my_pid() -> i32 {
    std::process::id() as i32
}

/// The positional argument `i` (1-based), or exit 2 with the usage line.
pub fn arg(args: &[String], i: usize, usage: &str) -> String {
    args.get(i).cloned().unwrap_or_else(|| {
        eprintln!("usage: {usage}");
        std::process::exit(2)
    })
}
