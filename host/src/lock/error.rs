//! What goes wrong with `vx.lock`: reading, writing, refusing a credential,
//! and the file not matching the configuration (`--check`, `--frozen`).

use crate::error::{Error, ErrorKind};

use super::LOCK_FILE;

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("could not read {file}: {0}", file = LOCK_FILE)]
    Read(#[source] std::io::Error),
    #[error("{file} is not a valid lock file: {0}", file = LOCK_FILE)]
    Invalid(String),
    /// The file holds plugin pins vx must keep, but is not TOML it can edit.
    #[error("{file}: {0}", file = LOCK_FILE)]
    Unparsable(#[source] toml_edit::TomlError),
    #[error("could not render {file}: {0}", file = LOCK_FILE)]
    Render(#[from] toml::ser::Error),
    #[error("could not render {file}: {0}", file = LOCK_FILE)]
    Reparse(#[source] toml_edit::TomlError),
    #[error("could not write {file}: {0}", file = LOCK_FILE)]
    Write(#[source] std::io::Error),
    #[error(
        "refusing to write {file}: project `{project}`, task `{task}`, field `{field}` holds what looks like a credential ({why})",
        file = LOCK_FILE
    )]
    Secret { project: String, task: String, field: &'static str, why: String },
    /// `vx lock --check` with no file to check.
    #[error("there is no {file}", file = LOCK_FILE)]
    Missing,
    #[error("--frozen needs a {file}, and there is none", file = LOCK_FILE)]
    FrozenMissing,
    #[error("--frozen: {file} does not match the configuration: {first}{and_more}", file = LOCK_FILE, and_more = more_changes(.more))]
    FrozenStale { first: String, more: usize },
}

fn more_changes(more: &usize) -> String {
    if *more > 0 { format!(" (and {more} more)") } else { String::new() }
}

impl From<LockError> for Error {
    fn from(e: LockError) -> Error {
        let (kind, hint) = match &e {
            LockError::Read(_) | LockError::Invalid(_) => (ErrorKind::Config, None),
            LockError::Unparsable(_) | LockError::Render(_) | LockError::Reparse(_) | LockError::Write(_) => {
                (ErrorKind::Internal, None)
            }
            LockError::Secret { .. } => (
                ErrorKind::Config,
                Some(
                    "read it from the environment when the task runs (list the variable's name in `env`) instead of writing it in the config",
                ),
            ),
            LockError::Missing => (ErrorKind::TaskFailed, Some("run `vx lock` and commit the file")),
            LockError::FrozenMissing => (ErrorKind::Config, Some("run `vx lock` and commit it")),
            LockError::FrozenStale { .. } => {
                (ErrorKind::Config, Some("run `vx lock --check` to see every change, and `vx lock` to update the file"))
            }
        };
        let error = Error::new(kind, e.to_string());
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}
