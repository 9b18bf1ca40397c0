//! What only the root `vx.toml` may set, checked: `[workspace]
//! global-inputs`, `[cache]` (directory, retention, remote tier),
//! `[plugins.NAME]` (kept for the plugin host) and `[remote]`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::diag::Source;
use super::duration::{parse_duration, parse_size};
use super::error::Diagnostic;
use super::model::{CacheSettings, PluginSettings, REAPI_REMOTE, RemoteSettings, RootSettings, grpc_address};
use super::raw::{RawFile, RawRemote};

const DEFAULT_MAX_SIZE: u64 = 5 << 30;
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(14 * 86_400);

/// The root settings, with defaults for what the root file (if any) leaves out.
pub fn root_settings(root: &Path, file: Option<&(Source, RawFile)>) -> Result<RootSettings, Diagnostic> {
    let mut cache = CacheSettings {
        dir: root.join(".vx/cache"),
        max_size: DEFAULT_MAX_SIZE,
        max_age: DEFAULT_MAX_AGE,
        remote: None,
    };
    let Some((source, raw)) = file else { return Ok(RootSettings { cache, ..RootSettings::default() }) };
    let global_inputs = raw
        .workspace
        .as_ref()
        .and_then(|w| w.global_inputs.as_ref())
        .map(|v| v.iter().map(|s| s.get_ref().clone()).collect())
        .unwrap_or_default();
    if let Some(c) = &raw.cache {
        if let Some(dir) = &c.dir {
            cache.dir = root.join(dir.get_ref());
        }
        if let Some(size) = &c.max_size {
            cache.max_size = parse_size(size.get_ref()).map_err(|m| source.error(Some(size.span()), m))?;
        }
        if let Some(age) = &c.max_age {
            cache.max_age = parse_duration(age.get_ref()).map_err(|m| source.error(Some(age.span()), m))?;
        }
        cache.remote = c.remote.as_ref().map(|r| r.get_ref().clone());
    }
    let plugins = raw
        .plugins
        .iter()
        .flatten()
        .map(|(name, p)| {
            let settings = PluginSettings {
                path: root.join(p.path.get_ref()),
                dirs: p.dirs.clone().unwrap_or_default(),
                env: p.env.clone().unwrap_or_default(),
                allow_hosts: p.allow_hosts.clone().unwrap_or_default(),
                allow_programs: p.allow_programs.clone().unwrap_or_default(),
                limits: p.limits.clone().unwrap_or_default(),
                config: p.config.clone().unwrap_or_default(),
            };
            (name.clone(), settings)
        })
        .collect::<BTreeMap<_, _>>();
    let remote = raw.remote.as_ref().map(|r| remote_settings(root, source, r)).transpose()?;
    if let Some(name) = raw.cache.as_ref().and_then(|c| c.remote.as_ref()) {
        check_cache_remote(source, name, &plugins, remote.is_some())?;
    }
    Ok(RootSettings { global_inputs, cache, plugins, remote })
}

/// `[remote]`, checked: a gRPC endpoint, a duration, a variable name.
fn remote_settings(root: &Path, source: &Source, raw: &RawRemote) -> Result<RemoteSettings, Diagnostic> {
    let endpoint = raw.endpoint.get_ref();
    if grpc_address(endpoint).is_none() {
        return Err(source
            .error(Some(raw.endpoint.span()), format!("[remote] endpoint `{endpoint}` is not a gRPC address"))
            .with_hint("write it like `grpc://127.0.0.1:50051` (plain) or `grpcs://cache.example.com:443` (TLS)"));
    }
    let timeout = match &raw.timeout {
        Some(t) => parse_duration(t.get_ref()).map_err(|m| source.error(Some(t.span()), m))?,
        None => Duration::from_secs(60),
    };
    if let Some(var) = &raw.token_env
        && (var.get_ref().is_empty() || var.get_ref().contains('='))
    {
        return Err(source
            .error(Some(var.span()), "[remote] token-env names the variable holding the token, not the token")
            .with_hint("write it like `token-env = \"VX_REMOTE_TOKEN\"` and export the token in that variable"));
    }
    Ok(RemoteSettings {
        endpoint: endpoint.clone(),
        instance_name: raw.instance_name.clone().unwrap_or_default(),
        token_env: raw.token_env.as_ref().map(|v| v.get_ref().clone()),
        tls_ca: raw.tls_ca.as_ref().map(|p| root.join(p.get_ref())),
        headers: raw.headers.clone().unwrap_or_default(),
        timeout,
        platform: raw.platform.clone().unwrap_or_default(),
    })
}

/// `[cache] remote` names a plugin of this workspace or `reapi` with a
/// `[remote]` table.
fn check_cache_remote(
    source: &Source,
    name: &Spanned<String>,
    plugins: &BTreeMap<String, PluginSettings>,
    has_remote: bool,
) -> Result<(), Diagnostic> {
    if name.get_ref() == REAPI_REMOTE {
        if plugins.contains_key(REAPI_REMOTE) {
            return Err(source
                .error(Some(name.span()), "`reapi` is both a plugin and the REAPI tier")
                .with_hint("rename [plugins.reapi]: `reapi` is reserved for the [remote] server"));
        }
        if !has_remote {
            return Err(source
                .error(Some(name.span()), "[cache] remote = \"reapi\" needs a [remote] table")
                .with_hint("add [remote] with endpoint = \"grpc://HOST:PORT\" (docs/remote.md)"));
        }
    }
    Ok(())
}
