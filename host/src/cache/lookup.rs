//! Looking a key up: in the local store, then in the remote tier, whose
//! entries are verified like local ones and kept locally; and which tier
//! answered.

use super::{Cache, CacheKey, Entry, Lookup};

/// Which tier a lookup's answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// The local store (or nowhere: a miss).
    Local,
    /// The remote, whole: the entry is now in the local store too.
    Remote,
    /// The remote, without the outputs' bytes: the entry's archive is
    /// empty, so it must not be restored (`--download`).
    RemoteWithoutOutputs,
}

impl Cache {
    /// Looks a key up in the local store, unless reads are off (`--force`,
    /// `--cache local:w`).
    pub(crate) fn lookup(&self, key: &CacheKey) -> Lookup {
        if self.reads() && self.mode.local.read { self.store.get(key) } else { Lookup::Miss }
    }

    /// Looks a key up locally, then in the remote tier, and says which
    /// tier answered. A remote hit is verified like a local one and
    /// written to the local store (when it is writable); a remote entry
    /// that does not verify is a warning and a miss. Without `outputs`, a
    /// remote that can leave them behind ([`Backend::partial`](super::Backend::partial)) sends the
    /// entry without its outputs' bytes ([`Tier::RemoteWithoutOutputs`]),
    /// which is neither stored nor restored (`--download`).
    pub(crate) fn lookup_tiers(&self, key: &CacheKey, outputs: bool) -> (Lookup, Tier) {
        let local = self.lookup(key);
        // An unreadable local store is no reason not to ask the remote one.
        if !matches!(local, Lookup::Miss | Lookup::Unreadable(_)) || !self.remote_reads() || self.force {
            return (local, Tier::Local);
        }
        let Some(remote) = &self.remote else { return (local, Tier::Local) };
        let partial = !outputs && remote.partial();
        let fetched = if partial { remote.get_without_outputs(&key.0) } else { remote.get(&key.0) };
        let Some(bytes) = fetched else { return (local, Tier::Local) };
        match Entry::decode(&bytes, key) {
            Ok(entry) if partial => (Lookup::Hit(Box::new(entry)), Tier::RemoteWithoutOutputs),
            Ok(entry) => {
                if self.mode.local.write {
                    match self.store.put(key, &bytes) {
                        Ok(()) => self.wrote.store(true, std::sync::atomic::Ordering::Relaxed),
                        Err(e) => tracing::warn!("could not keep a remote cache hit locally: {e}"),
                    }
                }
                (Lookup::Hit(Box::new(entry)), Tier::Remote)
            }
            Err(why) => {
                tracing::warn!("the remote cache returned an invalid entry for {} ({why}); running the task", key.0);
                (Lookup::Miss, Tier::Local)
            }
        }
    }

    /// `true` the first time in this invocation that the store could not
    /// be read: one warning says so, and later misses for the same reason
    /// stay quiet.
    pub(crate) fn first_unreadable(&self) -> bool {
        !self.unreadable_told.swap(true, std::sync::atomic::Ordering::Relaxed)
    }
}
