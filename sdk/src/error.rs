//! The SDK's error type: what every plugin function returns, convertible
//! from any `std::error::Error` with `?` and into the WIT `error` variant.
//!
//! Like `anyhow::Error`, [`Error`] does not implement `std::error::Error`
//! itself: that is what lets the blanket `From` impl exist.

use std::any::Any;
use std::fmt;

use crate::bindings::imports::vx::plugin::types::Error as WitError;

/// Which case of the WIT `error` variant an [`Error`] becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The plugin's `config` table (or a task's `options`) is wrong.
    InvalidConfig,
    /// A capability was not granted.
    Denied,
    /// A remote or resource is down; retrying later may succeed.
    Unavailable,
    /// Anything else.
    Failed,
}

/// A plugin failure: a kind for vx and a one-line message for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }

    /// A bad `config` key; the message should name the key.
    pub fn invalid_config(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidConfig, message)
    }

    /// A capability the workspace has not granted; name the key to add.
    pub fn denied(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Denied, message)
    }

    /// A remote that is down or answered "try later".
    pub fn unavailable(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unavailable, message)
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Failed, message)
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// Prefixes the message with what was being done: `"GET /v8/...: timeout"`.
    #[must_use]
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error { kind: self.kind, message: format!("{context}: {}", self.message) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Any error converts with `?`. A WIT error coming back from a host call
/// keeps its kind, also when it travelled inside an `io::Error` (the blob
/// adapters wrap it so); everything else becomes `failed` with its full
/// `source()` chain in the message.
impl<E> From<E> for Error
where
    E: std::error::Error + 'static,
{
    fn from(error: E) -> Self {
        if let Some(wit) = as_wit_error(&error) {
            return Error::from_wit(wit.clone());
        }
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        Error::failed(message)
    }
}

fn as_wit_error<'a>(error: &'a (dyn Any + 'static)) -> Option<&'a WitError> {
    if let Some(wit) = error.downcast_ref::<WitError>() {
        return Some(wit);
    }
    error.downcast_ref::<std::io::Error>()?.get_ref()?.downcast_ref::<WitError>()
}

impl From<Error> for WitError {
    fn from(error: Error) -> Self {
        match error.kind {
            ErrorKind::InvalidConfig => WitError::InvalidConfig(error.message),
            ErrorKind::Denied => WitError::Denied(error.message),
            ErrorKind::Unavailable => WitError::Unavailable(error.message),
            ErrorKind::Failed => WitError::Failed(error.message),
        }
    }
}

// Not `From<WitError> for Error`: the blanket impl above already covers
// `WitError` (it implements `std::error::Error`), so this is a plain fn.
impl Error {
    fn from_wit(error: WitError) -> Self {
        match error {
            WitError::InvalidConfig(m) => Error::invalid_config(m),
            WitError::Denied(m) => Error::denied(m),
            WitError::Unavailable(m) => Error::unavailable(m),
            WitError::Failed(m) => Error::failed(m),
        }
    }
}

/// `.context("…")` on any result whose error converts into [`Error`].
pub trait Context<T> {
    fn context(self, context: impl fmt::Display) -> Result<T, Error>;
}

impl<T, E: Into<Error>> Context<T> for Result<T, E> {
    fn context(self, context: impl fmt::Display) -> Result<T, Error> {
        self.map_err(|e| e.into().context(context))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_maps_to_its_wit_case() {
        let wit = |e: Error| match WitError::from(e) {
            WitError::InvalidConfig(m) => ("invalid-config", m),
            WitError::Denied(m) => ("denied", m),
            WitError::Unavailable(m) => ("unavailable", m),
            WitError::Failed(m) => ("failed", m),
        };
        assert_eq!(wit(Error::invalid_config("a")), ("invalid-config", "a".into()));
        assert_eq!(wit(Error::denied("b")), ("denied", "b".into()));
        assert_eq!(wit(Error::unavailable("c")), ("unavailable", "c".into()));
        assert_eq!(wit(Error::failed("d")), ("failed", "d".into()));
        for error in [Error::invalid_config("a"), Error::denied("b"), Error::unavailable("c"), Error::failed("d")] {
            assert_eq!(Error::from_wit(WitError::from(error.clone())), error);
        }
    }

    #[test]
    fn std_errors_become_failed_with_their_source_chain() {
        let parse = "x".parse::<u32>().unwrap_err();
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, parse);
        let error = Error::from(io);
        assert_eq!(error.kind(), ErrorKind::Failed);
        assert_eq!(error.message(), "invalid digit found in string");
    }

    #[test]
    fn wit_errors_keep_their_kind_through_question_mark() {
        fn host_call() -> Result<(), WitError> {
            Err(WitError::Denied("add env = [\"TOKEN\"]".into()))
        }
        fn plugin() -> Result<(), Error> {
            host_call()?;
            Ok(())
        }
        assert_eq!(plugin().unwrap_err(), Error::denied("add env = [\"TOKEN\"]"));
    }

    #[test]
    fn wit_errors_keep_their_kind_inside_io_errors() {
        let io = std::io::Error::other(WitError::Unavailable("503".into()));
        assert_eq!(Error::from(io), Error::unavailable("503"));
    }

    #[test]
    fn context_prefixes_the_message_and_keeps_the_kind() {
        let result: Result<(), Error> = Err(Error::unavailable("timed out"));
        let error = result.context("PUT /v8/artifacts/abc").unwrap_err();
        assert_eq!(error, Error::unavailable("PUT /v8/artifacts/abc: timed out"));
    }
}
