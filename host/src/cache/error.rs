//! What goes wrong in the cache, as callers receive it: [`CacheError`] from
//! the [`Cache`](super::Cache) facade, the errors of the parts beside it,
//! and how each becomes the user-facing [`crate::Error`].
//!
//! Most of these never reach the user as an error: a task whose key or
//! restore fails runs uncached, with a note. The conversions serve the
//! commands for which the cache is the point (`vx why`).

use super::archive::ArchiveError;
use crate::inputs::{GlobError, InputError};

/// Why a task could not be keyed, restored or stored.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error("could not hash {path}: {source}")]
    Hash { path: String, source: std::io::Error },
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("could not write the cache entry: {0}")]
    Write(std::io::Error),
    /// A `runtime` command failed: the task runs, uncached.
    #[error("runtime input `{command}` {why}")]
    Runtime { command: String, why: String },
    /// The workspace lockfile could not be read, so no key would be sound.
    #[error("{0}")]
    Lockfile(String),
}

/// Word for word: an input that cannot be listed or hashed is the same
/// error whether the cache or the inputs room names it.
impl From<InputError> for CacheError {
    fn from(e: InputError) -> CacheError {
        match e {
            InputError::Glob(e) => CacheError::Glob(e),
            InputError::Hash { path, source } => CacheError::Hash { path, source },
        }
    }
}

impl From<CacheError> for crate::Error {
    fn from(e: CacheError) -> crate::Error {
        match e {
            CacheError::Glob(e) => e.into(),
            other => crate::Error::internal(other.to_string()),
        }
    }
}
