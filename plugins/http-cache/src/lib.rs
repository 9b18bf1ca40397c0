//! The `http-cache` cache backend: vx's remote tier over the Turborepo /
//! Vercel remote cache HTTP API, so any server that speaks it (Vercel,
//! `turborepo-remote-cache`, `turbo-cache-server`, …) can hold vx's
//! artifacts.
//!
//! | vx call  | request                                   | answer                       |
//! |----------|-------------------------------------------|------------------------------|
//! | `exists` | `HEAD /v8/artifacts/KEY?teamId=…` per key | 200 → present, 404 → absent  |
//! | `get`    | `GET /v8/artifacts/KEY?teamId=…`          | 200 → the body, 404 → a miss |
//! | `put`    | `PUT /v8/artifacts/KEY?teamId=…`          | 2xx → stored                 |
//!
//! Every request carries `Authorization: Bearer TOKEN`, the token read
//! from the environment variable named by `token-env` (which the workspace
//! must grant with `env`). Bodies stream in chunks both ways. Any other
//! status is an error that names it, so vx warns and treats it as a miss.

mod api;

use serde::Deserialize;
use vx_plugin_sdk::blob;
use vx_plugin_sdk::cache_backend::{BlobReader, BlobWriter, CacheBackend};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_cache_backend};

/// The `[plugins.NAME].config` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Config {
    /// The server's base URL, e.g. `https://cache.acme.dev`; `/v8/artifacts`
    /// is appended. Its origin must be in `allow-hosts`.
    pub url: String,
    /// The environment variable holding the bearer token; `TURBO_TOKEN`
    /// when unset. The workspace grants it with `env = ["TURBO_TOKEN"]`.
    pub token_env: Option<String>,
    /// Sent as `?teamId=`.
    pub team_id: Option<String>,
    /// Sent as `?slug=` (when there is no `team-id`).
    pub slug: Option<String>,
    /// Per-request timeout in seconds (vx caps it at the plugin's
    /// `call-timeout`).
    pub timeout_secs: Option<u64>,
}

struct HttpCache;

impl Describe for HttpCache {
    fn info() -> PluginInfo {
        PluginInfo::new("http-cache", env!("CARGO_PKG_VERSION"))
            .config_schema(api::CONFIG_SCHEMA)
            .request("env=TURBO_TOKEN")
    }
}

impl CacheBackend for HttpCache {
    type Config = Config;

    fn exists(config: &Config, keys: &[String]) -> Result<Vec<bool>, Error> {
        let api = api::Api::new(config, std::env::var(api::token_var(config)).ok())?;
        keys.iter().map(|key| api.exists(key)).collect()
    }

    fn get(config: &Config, key: &str, sink: &BlobWriter) -> Result<bool, Error> {
        let api = api::Api::new(config, std::env::var(api::token_var(config)).ok())?;
        api.get(key, &mut blob::Writer::new(sink))
    }

    fn put(config: &Config, key: &str, size: u64, source: &BlobReader) -> Result<(), Error> {
        let api = api::Api::new(config, std::env::var(api::token_var(config)).ok())?;
        api.put(key, size, &mut blob::Reader::new(source))
    }
}

export_cache_backend!(HttpCache);
