//! What goes wrong in `vx worker`: [`WorkerError`] ends the worker; a
//! [`LeaseError`] ends one lease, and becomes the status the server sees.

use crate::remote::RemoteError;

/// Why the worker could not work for the server at all.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error(transparent)]
    Connect(RemoteError),
    #[error("could not join {endpoint}: {source}")]
    Join { endpoint: String, source: RemoteError },
}

impl From<WorkerError> for crate::Error {
    fn from(e: WorkerError) -> crate::Error {
        crate::Error::internal(e.to_string())
            .with_hint("is the server up, and does it offer the Remote Workers API (BuildGrid)?")
    }
}

/// Why one lease did not produce an `ActionResult`.
#[derive(Debug)]
pub(super) enum LeaseError {
    Timeout,
    /// The worker or the CAS failed: another attempt may succeed.
    Infra(String),
    /// The action cannot run as given.
    Bad(String),
}

impl From<RemoteError> for LeaseError {
    fn from(e: RemoteError) -> Self {
        match e {
            RemoteError::Unavailable(m) => LeaseError::Infra(m),
            RemoteError::Refused(m) | RemoteError::Invalid(m) | RemoteError::Blob(m) => LeaseError::Bad(m),
        }
    }
}

/// A path of the action that would leave its directory.
impl From<crate::paths::PathError> for LeaseError {
    fn from(e: crate::paths::PathError) -> Self {
        LeaseError::Bad(e.to_string())
    }
}

/// A local file operation that failed: the worker's problem, not the action's.
pub(super) fn infra(e: impl std::fmt::Display) -> LeaseError {
    LeaseError::Infra(e.to_string())
}
