//! A cache-backend plugin as the cache's [`Backend`]: `[cache] remote =
//! "NAME"` names a `[plugins.NAME]` whose world is `cache-backend`. The
//! plugin is loaded on the first call, so commands that open the cache
//! without touching the remote never load it. One that cannot be loaded
//! (no such plugin, another world, a failed load) is a warning, once, and
//! then answers like an empty remote: the run goes on with the local tier.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::load::{LoadedPlugin, World, load_configured};
use crate::cache::{Backend, BackendError};
use crate::config::{PluginSettings, Workspace};

/// The remote tier over a cache-backend plugin.
#[derive(Debug)]
pub(crate) struct PluginBackend {
    root: PathBuf,
    name: String,
    settings: Option<PluginSettings>,
    plugin: OnceLock<Option<LoadedPlugin>>,
}

impl PluginBackend {
    /// The backend of the plugin `name` of `ws`; nothing is loaded yet.
    pub(crate) fn new(ws: &Workspace, name: &str) -> PluginBackend {
        PluginBackend {
            root: ws.root.clone(),
            name: name.to_string(),
            settings: ws.plugins.get(name).cloned(),
            plugin: OnceLock::new(),
        }
    }

    fn plugin(&self) -> Option<&LoadedPlugin> {
        self.plugin.get_or_init(|| self.open()).as_ref()
    }

    /// Loads the plugin; `None` (with a warning) when it cannot be.
    fn open(&self) -> Option<LoadedPlugin> {
        let name = &self.name;
        let Some(settings) = &self.settings else {
            tracing::warn!(
                "[cache] remote = \"{name}\", but there is no [plugins.{name}]; the remote cache is off for this run"
            );
            return None;
        };
        match load_configured(&self.root, name, settings) {
            Ok(plugin) if plugin.world == World::CacheBackend => Some(plugin),
            Ok(plugin) => {
                tracing::warn!(
                    "[cache] remote names `{name}`, a {} plugin, not a cache backend; the remote cache is off",
                    plugin.world.name()
                );
                None
            }
            Err(e) => {
                tracing::warn!("{e}; the remote cache is off for this run");
                None
            }
        }
    }
}

impl Backend for PluginBackend {
    fn name(&self) -> &str {
        &self.name
    }

    fn exists(&self, keys: &[String]) -> Result<Vec<bool>, BackendError> {
        // Loaded even for no keys, as a `--dry` run with every task hit
        // locally still says once that a misconfigured remote is off.
        let Some(plugin) = self.plugin().filter(|_| !keys.is_empty()) else {
            return Ok(vec![false; keys.len()]);
        };
        plugin.cache_exists(keys).map_err(BackendError::new)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        let Some(plugin) = self.plugin() else { return Ok(None) };
        plugin.cache_get(key).map_err(BackendError::new)
    }

    fn put(&self, key: &str, bytes: Arc<Vec<u8>>) -> Result<(), BackendError> {
        let Some(plugin) = self.plugin() else { return Ok(()) };
        plugin.cache_put(key, bytes).map_err(BackendError::new)
    }

    /// Loads the plugin with its errors (a run only warns) and asks it for
    /// a key no entry has.
    fn check(&self) -> Result<Vec<String>, BackendError> {
        let name = &self.name;
        let Some(settings) = &self.settings else {
            return Err(BackendError::message(format!(
                "[cache] remote = \"{name}\", but there is no [plugins.{name}]; add it with `vx plugin add PATH --name {name}`"
            )));
        };
        let plugin = load_configured(&self.root, name, settings).map_err(BackendError::new)?;
        if plugin.world != World::CacheBackend {
            return Err(BackendError::message(format!(
                "[cache] remote names `{name}`, a {} plugin, not a cache backend; name a cache-backend plugin",
                plugin.world.name()
            )));
        }
        plugin.cache_exists(&[crate::cache::PROBE_KEY.to_string()]).map_err(BackendError::new)?;
        let shown = settings.path.strip_prefix(&self.root).unwrap_or(&settings.path);
        Ok(vec![format!("plugin `{name}` ({})", shown.display())])
    }
}
