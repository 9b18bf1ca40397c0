//! What can go wrong finding, reading or parsing a lockfile (or the
//! project `package.json` that enters the same key).
//!
//! Every variant names the file (or files) and reads as one line after
//! "failed to …". A caller that gets one keys on the files of
//! [`LockfileError::files`] hashed whole (`whole_file_digest`) and says so
//! in a one-line notice: an unreadable lockfile never fails a run.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::one_line;

/// A lockfile vx found but could not read as a dependency graph.
#[derive(Debug, thiserror::Error)]
pub enum LockfileError {
    #[error("read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("read {}: it is {size} bytes, over the {limit}-byte limit", path.display())]
    TooLarge { path: PathBuf, size: u64, limit: u64 },
    #[error("parse {} at line {line}, column {column}: {message}", path.display())]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    #[error("read {}: {message}", path.display())]
    Malformed { path: PathBuf, message: String },
    #[error("read {}: {what} is not supported", path.display())]
    Unsupported { path: PathBuf, what: String },
    #[error("choose a lockfile: found {}, and the root package.json names no \"packageManager\"", DisplayPaths(found))]
    Ambiguous { found: Vec<PathBuf> },
}

impl LockfileError {
    /// The lockfiles a caller should hash whole in place of a slice: the
    /// file that failed, or every candidate when the choice was ambiguous.
    pub fn files(&self) -> Vec<&Path> {
        match self {
            Self::Read { path, .. }
            | Self::TooLarge { path, .. }
            | Self::Syntax { path, .. }
            | Self::Malformed { path, .. }
            | Self::Unsupported { path, .. } => vec![path.as_path()],
            Self::Ambiguous { found } => found.iter().map(PathBuf::as_path).collect(),
        }
    }
}

struct DisplayPaths<'a>(&'a [PathBuf]);

impl fmt::Display for DisplayPaths<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, path) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", path.display())?;
        }
        Ok(())
    }
}

/// A format parser's complaint, before it is tied to a file.
///
/// Parsers work on text and know no paths; `Lockfile` adds the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// The text is not valid for its syntax (JSON, YAML, yarn's v1 format).
    Syntax { line: usize, column: usize, message: String },
    /// Valid syntax, but not the shape the format documents.
    Malformed(String),
    /// A version or variant of the format that vx does not read.
    Unsupported(String),
}

impl Problem {
    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        Self::Malformed(message.into())
    }

    pub(crate) fn unsupported(what: impl Into<String>) -> Self {
        Self::Unsupported(what.into())
    }

    pub(crate) fn at(self, path: &Path) -> LockfileError {
        let path = path.to_path_buf();
        match self {
            // Messages quote the file's own text, which may span lines.
            Self::Syntax { line, column, message } => {
                LockfileError::Syntax { path, line, column, message: one_line(&message) }
            }
            Self::Malformed(message) => LockfileError::Malformed { path, message: one_line(&message) },
            Self::Unsupported(what) => LockfileError::Unsupported { path, what: one_line(&what) },
        }
    }
}

impl From<serde_json::Error> for Problem {
    fn from(e: serde_json::Error) -> Self {
        Self::Syntax { line: e.line(), column: e.column(), message: strip_position(e.to_string()) }
    }
}

impl From<serde_yaml_ng::Error> for Problem {
    fn from(e: serde_yaml_ng::Error) -> Self {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        Self::Syntax { line, column, message: strip_position(e.to_string()) }
    }
}

/// serde_json and serde_yaml_ng append " at line L column C" to their
/// messages; the error already carries the position, once.
fn strip_position(message: String) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    }
}
