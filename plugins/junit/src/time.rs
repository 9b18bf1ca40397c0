//! Time formatting without a date crate: JUnit wants seconds with a
//! fraction, and an ISO 8601 `timestamp` on each suite.

/// Milliseconds as seconds with three decimals: `1234` → `1.234`.
pub fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Unix milliseconds as a UTC ISO 8601 timestamp without zone designator,
/// as the JUnit schema's `timestamp` attribute expects.
pub fn iso8601(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rem = secs % 86_400;
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's
/// `civil_from_days`, restricted to dates on or after the epoch.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_keep_milliseconds() {
        assert_eq!(seconds(0), "0.000");
        assert_eq!(seconds(7), "0.007");
        assert_eq!(seconds(61_250), "61.250");
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00");
        assert_eq!(iso8601(1_798_761_599_999), "2026-12-31T23:59:59");
    }
}
