//! `[history]` in the root `vx.toml`: how much run history
//! `.vx/history.db` keeps. `keep = "90d"` keeps the runs of the last 90
//! days, `keep = 1000` the last 1,000 runs; without it, the last
//! [`DEFAULT_KEEP_RUNS`]. Older runs are pruned as new ones are recorded
//! (`crate::history`), so a run's cost of writing history stops growing.

use std::time::Duration;

use toml::Spanned;

use super::diag::Source;
use super::duration::parse_duration;
use super::error::Diagnostic;
use super::raw::RawHistory;

/// Runs kept when `[history] keep` is not set: the dashboard's statistics
/// window, so its figures read the same as with all history.
pub(crate) const DEFAULT_KEEP_RUNS: u32 = 500;

/// How much history a workspace keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryKeep {
    /// The runs that started within this long of the newest one's end.
    Age(Duration),
    /// The last this many runs.
    Runs(u32),
}

impl Default for HistoryKeep {
    fn default() -> Self {
        HistoryKeep::Runs(DEFAULT_KEEP_RUNS)
    }
}

/// `[history]`, checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistorySettings {
    pub keep: HistoryKeep,
}

const KEEP_HINT: &str = "write a duration like `keep = \"90d\"` or a number of runs like `keep = 1000`";

/// `[history]` as the root file sets it, or the default.
pub(super) fn history_settings(source: &Source, raw: Option<&RawHistory>) -> Result<HistorySettings, Diagnostic> {
    match raw.and_then(|h| h.keep.as_ref()) {
        None => Ok(HistorySettings::default()),
        Some(keep) => Ok(HistorySettings { keep: parse_keep(source, keep)? }),
    }
}

fn parse_keep(source: &Source, keep: &Spanned<toml::Value>) -> Result<HistoryKeep, Diagnostic> {
    let refuse = |message: String| source.error(Some(keep.span()), message).with_hint(KEEP_HINT);
    match keep.get_ref() {
        toml::Value::Integer(n) => match u32::try_from(*n) {
            Ok(runs) if runs > 0 => Ok(HistoryKeep::Runs(runs)),
            _ => Err(refuse(format!("[history] keep must be a number of runs from 1 to {}, not {n}", u32::MAX))),
        },
        toml::Value::String(text) => match parse_duration(text) {
            Ok(age) if !age.is_zero() => Ok(HistoryKeep::Age(age)),
            Ok(_) => Err(refuse(format!("[history] keep = \"{text}\" would keep no run"))),
            Err(e) => Err(refuse(format!("[history] keep: {e}"))),
        },
        other => Err(refuse(format!("[history] keep is a duration or a number of runs, not `{other}`"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep(text: &str) -> Result<HistorySettings, String> {
        let file = format!("[history]\n{text}\n");
        let raw: super::super::raw::RawFile = toml::from_str(&file).map_err(|e| e.to_string())?;
        let source = Source::new("vx.toml", file.clone());
        history_settings(&source, raw.history.as_ref()).map_err(|d| d.to_string())
    }

    #[test]
    fn keep_is_an_age_or_a_count_and_anything_else_is_a_located_error() {
        assert_eq!(keep("").unwrap().keep, HistoryKeep::Runs(DEFAULT_KEEP_RUNS));
        assert_eq!(keep("keep = 3").unwrap().keep, HistoryKeep::Runs(3));
        assert_eq!(keep("keep = \"90d\"").unwrap().keep, HistoryKeep::Age(Duration::from_secs(90 * 86_400)));
        for (bad, says) in [
            ("keep = 0", "from 1 to"),
            ("keep = -4", "from 1 to"),
            ("keep = \"0d\"", "would keep no run"),
            ("keep = \"90\"", "has no unit"),
            ("keep = \"ninety days\"", "is not a duration"),
            ("keep = true", "not `true`"),
        ] {
            let e = keep(bad).unwrap_err();
            assert!(e.contains("vx.toml:2:8") && e.contains(says), "{bad}: {e}");
        }
        let e = keep("kept = 3").unwrap_err();
        assert!(e.contains("unknown field `kept`"), "{e}");
    }
}
