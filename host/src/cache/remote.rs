//! The remote tier: a cache-backend plugin named by `[cache] remote`, or
//! a REAPI server (`[cache] remote = "reapi"`, or a `[remote]` table with
//! no `[cache] remote`). Plugin entries travel as the same verified blobs
//! the local store holds; REAPI entries as action results, rebuilt into
//! those blobs (`remote::ReapiTier`). Either way a remote hit is decoded
//! and verified like a local one and then written to the local store. A failing or unreachable remote is a warning and a
//! miss, never a failed run; after a few failures it is left alone for the
//! rest of the run.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::config::{PluginSettings, REAPI_REMOTE};
use crate::plugin::{LoadedPlugin, World, load_configured};
use crate::remote::ReapiTier;

/// Failures after which the remote is not asked again in this run.
const MAX_FAILURES: usize = 3;

/// The remote tier, loaded on first use (commands that open the cache
/// without touching the remote never load the plugin).
#[derive(Debug)]
pub struct RemoteTier {
    /// The REAPI server, when the tier is one (else the plugin below).
    reapi: Option<ReapiTier>,
    root: PathBuf,
    name: String,
    settings: Option<PluginSettings>,
    plugin: OnceLock<Option<LoadedPlugin>>,
    failures: AtomicUsize,
}

impl RemoteTier {
    pub fn new(ws: &crate::config::Workspace, name: &str) -> RemoteTier {
        let reapi = (name == REAPI_REMOTE).then(|| ws.remote.clone()).flatten().map(ReapiTier::new);
        RemoteTier {
            reapi,
            root: ws.root.clone(),
            name: name.to_string(),
            settings: ws.plugins.get(name).cloned(),
            plugin: OnceLock::new(),
            failures: AtomicUsize::new(0),
        }
    }

    fn plugin(&self) -> Option<&LoadedPlugin> {
        self.plugin.get_or_init(|| Self::open(&self.root, &self.name, self.settings.as_ref())).as_ref()
    }

    /// Opens the plugin `name`; `None` (with a warning) when it cannot be.
    fn open(root: &std::path::Path, name: &str, settings: Option<&PluginSettings>) -> Option<LoadedPlugin> {
        let Some(settings) = settings else {
            eprintln!(
                "vx: warning: [cache] remote = \"{name}\", but there is no [plugins.{name}]; the remote cache is off for this run"
            );
            return None;
        };
        match load_configured(root, name, settings) {
            Ok(plugin) if plugin.world == World::CacheBackend => Some(plugin),
            Ok(plugin) => {
                eprintln!(
                    "vx: warning: [cache] remote names `{name}`, a {} plugin, not a cache backend; the remote cache is off",
                    plugin.world.name()
                );
                None
            }
            Err(e) => {
                eprintln!("vx: warning: {e}; the remote cache is off for this run");
                None
            }
        }
    }

    /// Whether the remote may still be asked. A REAPI tier given up on is
    /// skipped as such: falling through to the plugin path would look for a
    /// plugin named `reapi` and warn that it is missing.
    fn usable(&self) -> bool {
        self.failures.load(Ordering::Relaxed) < MAX_FAILURES
    }

    fn failed(&self, what: &str, e: &dyn std::fmt::Display) {
        let n = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        let tail = if n == MAX_FAILURES { "; not using the remote cache for the rest of this run" } else { "" };
        if n <= MAX_FAILURES {
            eprintln!("vx: warning: remote cache {what}: {e}{tail}");
        }
    }

    /// The entry of `key` from the remote, `None` on a miss or a failure.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        if let Some(reapi) = &self.reapi {
            if !self.usable() {
                return None;
            }
            return reapi.get(key).unwrap_or_else(|e| {
                self.failed("lookup failed (treated as a miss)", &e);
                None
            });
        }
        let plugin = self.plugin().filter(|_| self.usable())?;
        match plugin.cache_get(key) {
            Ok(found) => found,
            Err(e) => {
                self.failed("lookup failed (treated as a miss)", &e);
                None
            }
        }
    }

    /// Uploads an encoded entry; a failure is a warning.
    pub fn put(&self, key: &str, bytes: Arc<Vec<u8>>) {
        if let Some(reapi) = &self.reapi {
            if !self.usable() {
                return;
            }
            if let Err(e) = reapi.put(key, &bytes) {
                self.failed("upload failed", &e);
            }
            return;
        }
        let Some(plugin) = self.plugin().filter(|_| self.usable()) else { return };
        if let Err(e) = plugin.cache_put(key, bytes) {
            self.failed("upload failed", &e);
        }
    }

    /// Which keys the remote holds (batched); all `false` on a failure.
    pub fn exists(&self, keys: &[String]) -> Vec<bool> {
        if let Some(reapi) = &self.reapi {
            if !self.usable() || keys.is_empty() {
                return vec![false; keys.len()];
            }
            return reapi.exists(keys).unwrap_or_else(|e| {
                self.failed("lookup failed (treated as a miss)", &e);
                vec![false; keys.len()]
            });
        }
        let Some(plugin) = self.plugin().filter(|_| self.usable() && !keys.is_empty()) else {
            return vec![false; keys.len()];
        };
        match plugin.cache_exists(keys) {
            Ok(found) => found,
            Err(e) => {
                self.failed("lookup failed (treated as a miss)", &e);
                vec![false; keys.len()]
            }
        }
    }

    /// Reports what the run could not upload (REAPI refusals are counted,
    /// never silent).
    pub fn finish(&self) {
        if let Some(reapi) = &self.reapi {
            reapi.finish();
        }
    }
}
