//! What is wrong with a workspace's configuration, as [`ConfigError`]: a
//! [`Diagnostic`] located in a file (`PATH:LINE:COL: message`, with a hint
//! that says how to mend it), or a problem with the workspace as a whole.
//! Every one becomes a configuration error (exit 2) but I/O failures,
//! which are internal.

use std::fmt;
use std::path::PathBuf;

use crate::error::Error;

/// One problem at a place in a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// `path:line:col`, or just the path.
    pub location: String,
    pub message: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    /// The message often quotes the file's own text (a duration, a glob), which
    /// may hold a newline; it is flattened so the diagnostic stays one line.
    pub fn new(location: String, message: impl fmt::Display) -> Self {
        Diagnostic { location, message: crate::error::flatten(&message.to_string()), hint: None }
    }

    /// Adds the sentence that tells the user how to mend it.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Something wrong in one file, at a place in it.
    #[error("{0}")]
    Invalid(Diagnostic),
    #[error("no vx workspace found in {} or any parent directory", .start.display())]
    NoWorkspace { start: PathBuf },
    #[error("invalid project glob `{pattern}`: {why}")]
    BadGlob { pattern: String, why: String },
    #[error("two projects are named `{name}`: {first} and {second}")]
    DuplicateName { name: String, first: String, second: String },
    #[error("failed to read {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("failed to resolve {}: {source}", .path.display())]
    Resolve { path: PathBuf, source: std::io::Error },
    /// A turbo configuration that cannot be read as turbo reads it
    /// (`config::native`): the error as `vx init` gives it, hint and all.
    #[error("{0}")]
    Translated(Box<Error>),
}

impl From<Diagnostic> for ConfigError {
    fn from(d: Diagnostic) -> Self {
        ConfigError::Invalid(d)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Error {
        if let ConfigError::Translated(inner) = e {
            return *inner;
        }
        let hint = match &e {
            ConfigError::Invalid(d) => d.hint.clone(),
            ConfigError::NoWorkspace { .. } => {
                Some("create a vx.toml with a [workspace] table at the repository root, or run with -C DIR".to_string())
            }
            ConfigError::BadGlob { .. } => {
                Some("fix the pattern in [workspace] projects (or package.json workspaces)".to_string())
            }
            ConfigError::DuplicateName { .. } => {
                Some("give one of them another `name` in [project] of its vx.toml".to_string())
            }
            ConfigError::Read { .. } | ConfigError::Resolve { .. } => return Error::internal(e.to_string()),
            ConfigError::Translated(_) => None,
        };
        let error = Error::config(e.to_string());
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}
