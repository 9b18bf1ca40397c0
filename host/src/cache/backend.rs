//! The seam every cache tier is reached through: a store of encoded
//! entries by key. The local store, a cache-backend plugin and a REAPI
//! server each implement [`Backend`]; the cache verifies whatever comes
//! back, so a backend only moves bytes and never needs to be trusted.
//!
//! The cache keeps its local tier as a concrete [`LocalStore`]: a fully
//! cached run looks every task up there, and that path stays free of
//! dynamic dispatch and of the copies this byte-level interface implies.
//! The remote tier is a `Box<dyn Backend>` built outside this module (by
//! `crate::backends`), so the cache names neither plugins nor REAPI.

use std::fmt;
use std::sync::Arc;

use super::key::CacheKey;
use super::store::LocalStore;

/// A store of encoded entries (the bytes [`Entry::encode`](super::Entry::encode)
/// makes), keyed by the hex text of a [`CacheKey`].
///
/// Calls are blocking and made from the run loop's blocking threads, one
/// per task; an implementation may connect or load lazily on its first
/// call. A backend that cannot be used at all (a plugin that does not
/// load) says so once and then answers like an empty store, which is not
/// a failure: failures are what the tier counts towards giving up.
pub(crate) trait Backend: Send + Sync + fmt::Debug {
    /// Who the backend is (`reapi`, the plugin's name, `local`), for messages.
    fn name(&self) -> &str;

    /// Which of `keys` the backend holds, one answer per key, in order.
    fn exists(&self, keys: &[String]) -> Result<Vec<bool>, BackendError>;

    /// The entry of `key`, `None` on a miss.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, BackendError>;

    /// Whether [`Backend::get_without_outputs`] leaves the outputs' bytes
    /// behind (`--download`); when not, it fetches whole entries.
    fn partial(&self) -> bool {
        false
    }

    /// The entry of `key` without its outputs' bytes: its log and header
    /// (which still lists every output with its BLAKE3), its archive empty.
    /// Such an entry is never stored nor restored; the outputs are fetched
    /// with [`Backend::get`] when a task needs them. By default the whole
    /// entry, as `get` gives it (see [`Backend::partial`]).
    fn get_without_outputs(&self, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.get(key)
    }

    /// Stores an encoded entry under `key`.
    fn put(&self, key: &str, bytes: Arc<Vec<u8>>) -> Result<(), BackendError>;

    /// The run is over: report what the backend kept count of.
    fn finish(&self) {}

    /// Connects (or loads) now and says what the backend offers, for `vx
    /// info`; an error says why it cannot be used. By default, one lookup
    /// of a key no entry has.
    fn check(&self) -> Result<Vec<String>, BackendError> {
        self.exists(&[PROBE_KEY.to_string()]).map(|_| Vec::new())
    }
}

/// A well-formed key no entry has (the hex of 32 zero bytes), for
/// [`Backend::check`].
pub(crate) const PROBE_KEY: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A backend's failure, shown as the backend's own error text.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct BackendError(Box<dyn std::error::Error + Send + Sync>);

impl BackendError {
    pub(crate) fn new(e: impl std::error::Error + Send + Sync + 'static) -> BackendError {
        BackendError(Box::new(e))
    }

    /// A failure that is only a sentence.
    pub(crate) fn message(text: impl Into<String>) -> BackendError {
        BackendError(text.into().into())
    }
}

/// The local store as a backend: a directory another process (or a shared
/// mount) fills. Its reads are raw bytes; the cache verifies them as it
/// verifies any tier's.
impl Backend for LocalStore {
    fn name(&self) -> &str {
        "local"
    }

    fn exists(&self, keys: &[String]) -> Result<Vec<bool>, BackendError> {
        Ok(keys.iter().map(|k| self.contains(&CacheKey(k.clone()))).collect())
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.read(&CacheKey(key.to_string())).map_err(BackendError::new)
    }

    fn put(&self, key: &str, bytes: Arc<Vec<u8>>) -> Result<(), BackendError> {
        LocalStore::put(self, &CacheKey(key.to_string()), &bytes).map_err(BackendError::new)
    }
}
