//! What goes wrong listing or hashing a task's inputs, and a glob that
//! does not compile as the user hears of it. The cache turns
//! these into its own errors word for word (`cache::CacheError`), so a
//! task's note reads the same whichever room failed.

use super::glob::GlobError;

/// Why a task's inputs could not be listed or hashed.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error("could not hash {path}: {source}")]
    Hash { path: String, source: std::io::Error },
}

impl From<GlobError> for crate::Error {
    fn from(e: GlobError) -> crate::Error {
        crate::Error::config(e.to_string()).with_hint("fix the glob in vx.toml")
    }
}
