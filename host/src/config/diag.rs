//! Diagnostics for configuration files: turning byte spans into
//! `file:line:column` and suggesting the nearest valid name.
//!
//! Every config error is one line, `PATH:LINE:COL: message; hint`, so that
//! editors and terminals can jump to it.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::error::Diagnostic;

/// A config file's text, kept to locate spans in it.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    /// The path as shown to the user (relative to the workspace root when possible).
    pub display: PathBuf,
    pub text: String,
}

impl Source {
    pub(crate) fn new(display: impl Into<PathBuf>, text: String) -> Self {
        Source { display: display.into(), text }
    }

    /// One-based line and column (in characters) of a byte offset.
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// A config error located at `span`.
    pub(crate) fn error(&self, span: Option<Range<usize>>, message: impl fmt::Display) -> Diagnostic {
        Diagnostic::new(self.locate(span), message)
    }

    /// `path:line:col`, or just the path when there is no span.
    pub(crate) fn locate(&self, span: Option<Range<usize>>) -> String {
        match span {
            Some(span) => {
                let (line, col) = self.line_col(span.start);
                format!("{}:{line}:{col}", self.display.display())
            }
            None => self.display.display().to_string(),
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The candidate nearest to `wrong`, when it is near enough to be a typo:
/// within a third of its length in edits (a swap of two letters counts as
/// one, so `wbe` finds `web`), or sharing most of its prefix (Jaro-Winkler,
/// so `dependson` finds `depends-on`).
pub(crate) fn nearest<'a>(wrong: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let max_edits = (wrong.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter_map(|c| {
            let edits = strsim::osa_distance(wrong, c);
            let similarity = strsim::jaro_winkler(wrong, c);
            (edits <= max_edits || similarity >= 0.85).then_some((edits, -similarity, c))
        })
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .map(|(_, _, c)| c)
}

/// `; did you mean `x`?` or nothing.
pub(crate) fn did_you_mean<'a>(wrong: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(wrong, candidates).map_or_else(String::new, |c| format!("; did you mean `{c}`?"))
}

/// Converts a TOML parse or type error into a located one-line error.
///
/// serde's messages for unknown keys list the expected ones ("unknown field
/// `comand`, expected one of `command`, …"); that list is turned into a
/// single suggestion, because a wall of names is not a hint.
pub(crate) fn toml_error(source: &Source, err: &toml::de::Error) -> Diagnostic {
    let message = err.message().trim().replace('\n', " ");
    let located = |m: String| source.error(err.span(), m);
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((name, tail)) = rest.split_once('`')
    {
        let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
        let hint = did_you_mean(name, expected.iter().copied());
        let hint = if hint.is_empty() && !expected.is_empty() {
            format!("; valid keys here: {}", expected.join(", "))
        } else {
            hint
        };
        return located(format!("unknown key `{name}`{hint}"));
    }
    located(message)
}

/// Renders a path relative to `root` for messages.
pub(crate) fn relative_display(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one_in_characters() {
        let src = Source::new("a.toml", "ab\nçd = 1\n".to_string());
        assert_eq!(src.line_col(0), (1, 1));
        assert_eq!(src.line_col(3), (2, 1));
        assert_eq!(src.line_col(5), (2, 2));
    }

    #[test]
    fn nearest_picks_typos_and_rejects_strangers() {
        let keys = ["command", "depends-on", "inputs"];
        assert_eq!(nearest("comand", keys), Some("command"));
        assert_eq!(nearest("dependson", keys), Some("depends-on"));
        assert_eq!(nearest("zzzzzz", keys), None);
        assert_eq!(nearest("wbe", ["web", "ui"]), Some("web"));
        assert_eq!(nearest("biuld", ["build", "test"]), Some("build"));
        assert_eq!(nearest("x", ["build", "test"]), None);
    }
}
