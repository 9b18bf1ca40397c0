//! The remote tier: whichever [`Backend`] the workspace's configuration
//! chose (a cache-backend plugin named by `[cache] remote`, or a REAPI
//! server), behind the rules every remote obeys here. An entry from the
//! remote is decoded and verified like a local one by the caller and then
//! written to the local store. A failing or unreachable remote is a warning
//! and a miss, never a failed run; after a few failures it is left alone
//! for the rest of the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::backend::Backend;

/// Failures after which the remote is not asked again in this run.
const MAX_FAILURES: usize = 3;

/// The remote tier of one run. The backend connects or loads on first use,
/// so commands that open the cache without touching the remote cost nothing.
#[derive(Debug)]
pub(crate) struct RemoteTier {
    backend: Box<dyn Backend>,
    failures: AtomicUsize,
}

impl RemoteTier {
    pub(crate) fn new(backend: Box<dyn Backend>) -> RemoteTier {
        RemoteTier { backend, failures: AtomicUsize::new(0) }
    }

    /// Whether the remote may still be asked. Checked before the backend
    /// is called, so a remote given up on is not even connected to again.
    fn usable(&self) -> bool {
        self.failures.load(Ordering::Relaxed) < MAX_FAILURES
    }

    fn failed(&self, what: &str, e: &dyn std::fmt::Display) {
        let n = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        let tail = if n == MAX_FAILURES { "; not using the remote cache for the rest of this run" } else { "" };
        if n <= MAX_FAILURES {
            tracing::warn!("remote cache {what}: {e}{tail}");
        }
    }

    /// The entry of `key` from the remote, `None` on a miss or a failure.
    pub(crate) fn get(&self, key: &str) -> Option<Vec<u8>> {
        if !self.usable() {
            return None;
        }
        self.backend.get(key).unwrap_or_else(|e| {
            self.failed("lookup failed (treated as a miss)", &e);
            None
        })
    }

    /// Whether [`RemoteTier::get_without_outputs`] leaves outputs behind.
    pub(crate) fn partial(&self) -> bool {
        self.backend.partial()
    }

    /// The entry of `key` without its outputs' bytes when the backend can
    /// leave them behind ([`Backend::get_without_outputs`]); `None` on a
    /// miss or a failure.
    pub(crate) fn get_without_outputs(&self, key: &str) -> Option<Vec<u8>> {
        if !self.usable() {
            return None;
        }
        self.backend.get_without_outputs(key).unwrap_or_else(|e| {
            self.failed("lookup failed (treated as a miss)", &e);
            None
        })
    }

    /// Uploads an encoded entry; a failure is a warning.
    pub(crate) fn put(&self, key: &str, bytes: Arc<Vec<u8>>) {
        if !self.usable() {
            return;
        }
        if let Err(e) = self.backend.put(key, bytes) {
            self.failed("upload failed", &e);
        }
    }

    /// Which keys the remote holds (batched); all `false` on a failure.
    pub(crate) fn exists(&self, keys: &[String]) -> Vec<bool> {
        if !self.usable() {
            return vec![false; keys.len()];
        }
        self.backend.exists(keys).unwrap_or_else(|e| {
            self.failed("lookup failed (treated as a miss)", &e);
            vec![false; keys.len()]
        })
    }

    /// Lets the backend report what the run could not do (REAPI refusals
    /// are counted, never silent).
    pub(crate) fn finish(&self) {
        self.backend.finish();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::cache::backend::BackendError;
    use crate::cache::{CacheKey, LocalStore};

    /// A backend that fails every call, counting them.
    #[derive(Debug, Default)]
    struct Broken {
        calls: Arc<AtomicUsize>,
    }

    impl Backend for Broken {
        fn name(&self) -> &str {
            "broken"
        }

        fn exists(&self, _: &[String]) -> Result<Vec<bool>, BackendError> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            Err(BackendError::new(std::io::Error::other("down")))
        }

        fn get(&self, _: &str) -> Result<Option<Vec<u8>>, BackendError> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            Err(BackendError::new(std::io::Error::other("down")))
        }

        fn put(&self, _: &str, _: Arc<Vec<u8>>) -> Result<(), BackendError> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            Err(BackendError::new(std::io::Error::other("down")))
        }
    }

    #[test]
    fn a_failing_remote_is_left_alone_after_three_failures() {
        let calls = Arc::new(AtomicUsize::new(0));
        let tier = RemoteTier::new(Box::new(Broken { calls: calls.clone() }));
        assert_eq!(tier.get("k"), None);
        tier.put("k", Arc::new(Vec::new()));
        assert_eq!(tier.exists(&["k".into(), "j".into()]), [false, false]);
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        assert_eq!(tier.get("k"), None);
        tier.put("k", Arc::new(Vec::new()));
        assert_eq!(tier.exists(&["k".into()]), [false]);
        assert_eq!(calls.load(Ordering::Relaxed), 3, "no call after the third failure");
    }

    #[test]
    fn a_local_store_serves_as_a_remote() {
        let dir = std::env::temp_dir().join(format!("vx-remote-tier-{}", std::process::id()));
        let tier = RemoteTier::new(Box::new(LocalStore::new(dir.clone())));
        let key = CacheKey("ab".repeat(32));
        assert_eq!(tier.exists(std::slice::from_ref(&key.0)), [false]);
        assert_eq!(tier.get(&key.0), None);
        tier.put(&key.0, Arc::new(b"entry bytes".to_vec()));
        assert_eq!(tier.exists(std::slice::from_ref(&key.0)), [true]);
        assert_eq!(tier.get(&key.0).as_deref(), Some(&b"entry bytes"[..]));
        let _ = std::fs::remove_dir_all(dir);
    }
}
