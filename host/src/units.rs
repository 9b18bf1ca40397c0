//! Units and formatting that every room shows or records the same way:
//! sizes, durations, command lines and times. A leaf: it imports nothing
//! of the crate, so any room may use it without an edge upward.

use std::time::{Duration, SystemTime};

/// `512 B`, `3.4 KiB`, `84.2 MiB`, `1.50 GiB`.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `850ms`, `2.35s`, `1m04s`.
pub(crate) fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.2}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// Quotes one word for a POSIX shell: as is when it holds only safe
/// characters, else in single quotes.
pub(crate) fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "_-./:,+=@%^#".contains(c));
    if safe { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// `vx ARGS…` as one line, from the process arguments.
pub(crate) fn command_line(args: &[String]) -> String {
    std::iter::once("vx".to_string()).chain(args.iter().map(|a| shell_quote(a))).collect::<Vec<_>>().join(" ")
}

pub(crate) fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}
