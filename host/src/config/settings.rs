//! What only the root `vx.toml` may set, checked: `[workspace]
//! global-inputs` and the environment settings (`env-mode`, `global-env`,
//! `global-pass-env`, `global-runtime`), `[cache]` (directory, retention, remote tier),
//! `[plugins.NAME]` (kept for the plugin host), `[remote]` and `[history]`
//! (`config::history`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::diag::Source;
use super::duration::{parse_duration, parse_size};
use super::env::{EnvMode, check_entry};
use super::error::Diagnostic;
use super::history::history_settings;
use super::model::{
    CacheSettings, EnvSettings, PluginSettings, REAPI_REMOTE, RemoteSettings, RootSettings, grpc_address,
};
use super::raw::{RawFile, RawRemote, RawWorkspace};

const DEFAULT_MAX_SIZE: u64 = 5 << 30;
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(14 * 86_400);

/// The root settings, with defaults for what the root file (if any) leaves out.
pub(crate) fn root_settings(root: &Path, file: Option<&(Source, RawFile)>) -> Result<RootSettings, Diagnostic> {
    let mut cache = CacheSettings {
        dir: root.join(".vx/cache"),
        max_size: DEFAULT_MAX_SIZE,
        max_age: DEFAULT_MAX_AGE,
        remote: None,
        monitor: super::MonitorMode::default(),
    };
    let Some((source, raw)) = file else { return Ok(RootSettings { cache, ..RootSettings::default() }) };
    let history = history_settings(source, raw.history.as_ref())?;
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
        if let Some(monitor) = &c.monitor {
            cache.monitor = super::MonitorMode::parse(monitor.get_ref()).ok_or_else(|| {
                source.error(
                    Some(monitor.span()),
                    format!("[cache] monitor is `auto`, `watchman`, `git` or `off`, not `{}`", monitor.get_ref()),
                )
            })?;
        }
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
                allow_clocks: p.allow_clocks.unwrap_or(false),
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
    let env = env_settings(source, raw.workspace.as_ref())?;
    Ok(RootSettings { global_inputs, cache, plugins, remote, env, history })
}

/// `[workspace] env-mode`, `global-env`, `global-pass-env` and `global-runtime`.
fn env_settings(source: &Source, raw: Option<&RawWorkspace>) -> Result<EnvSettings, Diagnostic> {
    let Some(raw) = raw else { return Ok(EnvSettings::default()) };
    let mode = match &raw.env_mode {
        None => EnvMode::default(),
        Some(m) => EnvMode::parse(m.get_ref()).ok_or_else(|| {
            source
                .error(Some(m.span()), format!("unknown env-mode `{}`", m.get_ref()))
                .with_hint("write `env-mode = \"strict\"` (the default) or `env-mode = \"loose\"`")
        })?,
    };
    Ok(EnvSettings {
        mode,
        global_env: env_list(source, &raw.global_env)?,
        global_pass_env: env_list(source, &raw.global_pass_env)?,
        global_runtime: runtime_list(source, &raw.global_runtime)?,
    })
}

/// An `env` or `pass-env` list, each entry checked.
pub(super) fn env_list(source: &Source, list: &Option<Vec<Spanned<String>>>) -> Result<Vec<String>, Diagnostic> {
    list.iter()
        .flatten()
        .map(|e| {
            check_entry(e.get_ref()).map(|()| e.get_ref().clone()).map_err(|hint| {
                source.error(Some(e.span()), format!("invalid environment variable `{}`", e.get_ref())).with_hint(hint)
            })
        })
        .collect()
}

/// A `runtime` list: commands for `sh -c`, none empty.
pub(super) fn runtime_list(source: &Source, list: &Option<Vec<Spanned<String>>>) -> Result<Vec<String>, Diagnostic> {
    list.iter()
        .flatten()
        .map(|c| match c.get_ref().trim() {
            "" => Err(source
                .error(Some(c.span()), "empty runtime command")
                .with_hint("write the command whose output belongs to the key, like `runtime = [\"node --version\"]`")),
            _ => Ok(c.get_ref().clone()),
        })
        .collect()
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
