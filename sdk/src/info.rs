//! What a plugin says about itself (`info` in every exported interface).

use crate::bindings::imports::vx::plugin::types::PluginInfo as WitPluginInfo;

/// Implemented by every plugin, whatever its world.
pub trait Describe {
    fn info() -> PluginInfo;
}

/// Builder for the WIT `plugin-info` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginInfo {
    name: String,
    version: String,
    min_vx_version: Option<String>,
    config_schema: Option<String>,
    requests: Vec<String>,
}

impl PluginInfo {
    /// Usually `PluginInfo::new("junit", env!("CARGO_PKG_VERSION"))`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        PluginInfo {
            name: name.into(),
            version: version.into(),
            min_vx_version: None,
            config_schema: None,
            requests: Vec::new(),
        }
    }

    /// The oldest vx this plugin runs on, checked before linking.
    #[must_use]
    pub fn min_vx_version(mut self, version: impl Into<String>) -> Self {
        self.min_vx_version = Some(version.into());
        self
    }

    /// A JSON Schema for the `config` table; vx validates against it at load.
    #[must_use]
    pub fn config_schema(mut self, schema: impl Into<String>) -> Self {
        self.config_schema = Some(schema.into());
        self
    }

    /// A capability the plugin asks for, in grant syntax:
    /// `allow-hosts=https://cache.acme.dev`, `env=VX_CACHE_TOKEN`.
    #[must_use]
    pub fn request(mut self, grant: impl Into<String>) -> Self {
        self.requests.push(grant.into());
        self
    }
}

impl From<PluginInfo> for WitPluginInfo {
    fn from(info: PluginInfo) -> Self {
        WitPluginInfo {
            name: info.name,
            version: info.version,
            min_vx_version: info.min_vx_version,
            config_schema: info.config_schema,
            requests: info.requests,
        }
    }
}
