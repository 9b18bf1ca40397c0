//! Human durations and sizes in config and flags: `500ms`, `30s`, `10m`,
//! `2h`, `14d`, `1h30m`; `10GiB`, `512MB`.

use std::time::Duration;

/// Why a duration (`timeout`, `max-age`, `--timeout`) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DurationError {
    #[error("empty duration; write it like `30s`, `10m` or `1h30m`")]
    Empty,
    #[error("`{0}` is not a duration; write it like `30s`, `10m` or `1h30m`")]
    NotADuration(String),
    #[error("`{0}` is too large a duration")]
    TooLarge(String),
    #[error("`{text}` has no unit; write it like `{value}s` or `{value}m`")]
    NoUnit { text: String, value: u64 },
    #[error("unknown unit `{unit}` in `{text}`; use ms, s, m, h or d")]
    UnknownUnit { unit: String, text: String },
}

/// Why a size (`max-size`, a plugin's `memory`) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SizeError {
    #[error("`{0}` is not a size; write it like `512MiB` or `10GiB`")]
    NotASize(String),
    #[error("unknown unit `{unit}` in `{text}`; use B, KiB, MiB, GiB, KB, MB or GB")]
    UnknownUnit { unit: String, text: String },
}

/// Parses `1h30m`, `10m`, `2s`, `250ms`, `14d`. A bare number is refused so
/// that `timeout = "10"` cannot silently mean seconds or minutes.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(DurationError::NotADuration(text.to_string()));
        }
        let value: u64 = rest[..digits].parse().map_err(|_| DurationError::TooLarge(text.to_string()))?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let millis = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "" => return Err(DurationError::NoUnit { text: text.to_string(), value }),
            other => return Err(DurationError::UnknownUnit { unit: other.to_string(), text: text.to_string() }),
        };
        let add = value.checked_mul(millis).ok_or_else(|| DurationError::TooLarge(text.to_string()))?;
        total += Duration::from_millis(add);
    }
    Ok(total)
}

/// Parses `10GiB`, `512MiB`, `5GB`, `100KB`, `1024` (bytes).
pub(crate) fn parse_size(text: &str) -> Result<u64, SizeError> {
    let text = text.trim();
    let digits = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let value: f64 = text[..digits].parse().map_err(|_| SizeError::NotASize(text.to_string()))?;
    let factor: u64 = match text[digits..].trim() {
        "" | "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        other => return Err(SizeError::UnknownUnit { unit: other.to_string(), text: text.to_string() }),
    };
    Ok((value * factor as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("10").unwrap_err().to_string(), "`10` has no unit; write it like `10s` or `10m`");
        assert!(parse_duration("10x").unwrap_err().to_string().contains("unknown unit"));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("m").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10GiB"), Ok(10 << 30));
        assert_eq!(parse_size("5GB"), Ok(5_000_000_000));
        assert_eq!(parse_size("1024"), Ok(1024));
        assert!(parse_size("ten").is_err());
        assert!(parse_size("1XB").is_err());
    }
}
