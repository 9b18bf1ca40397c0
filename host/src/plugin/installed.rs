//! `vx plugin list`: each configured plugin with its pin state, whether a
//! compiled artifact is cached, its grants and what it requests.

use std::fmt;
use std::path::PathBuf;

use super::{read_pin, read_plugin_file};
use crate::config::{PluginSettings, Workspace};
use crate::error::{Error, Result};

/// Whether a plugin's file matches its pin in `vx.lock`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PinState {
    /// The file could not be read; the reason.
    Unreadable(String),
    NotPinned,
    Matches,
    Differs,
    /// The file is absent and the pin names a first-party plugin: vx loads
    /// its own copy, the very bytes pinned.
    BuiltIn,
}

impl fmt::Display for PinState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PinState::Unreadable(why) => write!(f, "unreadable ({why})"),
            PinState::NotPinned => f.write_str("not pinned"),
            PinState::Matches => f.write_str("pinned ok"),
            PinState::Differs => f.write_str("DOES NOT MATCH its pin"),
            PinState::BuiltIn => f.write_str("absent; pinned ok, vx's built-in copy is used"),
        }
    }
}

/// One configured plugin, as `vx plugin list` shows it.
#[derive(Debug, Clone)]
pub(crate) struct Installed {
    pub name: String,
    /// Relative to the workspace root when it is inside it.
    pub file: PathBuf,
    pub state: PinState,
    pub compiled: bool,
    /// From the pin; empty when it is not pinned.
    pub exports: String,
    pub version: String,
    /// The BLAKE3 hash of the pin, when pinned.
    pub hash: Option<String>,
    pub requests: Vec<String>,
    /// The grants of `[plugins.NAME]`, as `key=value`.
    pub grants: Vec<String>,
}

impl Installed {
    /// What it requests and is not granted.
    pub(crate) fn ungranted(&self) -> Vec<String> {
        self.requests.iter().filter(|r| !self.grants.contains(r)).cloned().collect()
    }
}

/// Every `[plugins.NAME]` of the workspace, by name.
pub(crate) fn installed(ws: &Workspace) -> Result<Vec<Installed>> {
    ws.plugins.iter().map(|(name, settings)| inspect(ws, name, settings)).collect()
}

fn inspect(ws: &Workspace, name: &str, settings: &PluginSettings) -> Result<Installed> {
    let pin = read_pin(&ws.root, name).map_err(|e| Error::config(e.to_string()))?;
    let file = read_plugin_file(name, &settings.path);
    let builtin = pin.as_ref().and_then(|p| super::first_party::by_hash(&p.blake3));
    let (state, compiled) = match (&pin, &file) {
        (_, Err(_)) if builtin.is_some() && !settings.path.exists() => {
            (PinState::BuiltIn, builtin.is_some_and(|b| super::compiled(&b.hash())))
        }
        (_, Err(e)) => (PinState::Unreadable(e.message.clone()), false),
        (None, Ok(_)) => (PinState::NotPinned, false),
        (Some(p), Ok((_, hash))) if p.blake3 == hash.to_hex().as_str() => (PinState::Matches, super::compiled(hash)),
        (Some(_), Ok(_)) => (PinState::Differs, false),
    };
    let hash = pin.as_ref().map(|p| p.blake3.clone());
    let (exports, version, requests) = pin.map(|p| (p.exports, p.plugin_version, p.requests)).unwrap_or_default();
    Ok(Installed {
        name: name.to_string(),
        file: settings.path.strip_prefix(&ws.root).unwrap_or(&settings.path).to_path_buf(),
        state,
        compiled,
        exports,
        version,
        hash,
        requests,
        grants: grant_strings(settings),
    })
}

/// The grants of `[plugins.NAME]` in the form plugins request them.
fn grant_strings(settings: &PluginSettings) -> Vec<String> {
    let text = |v: &toml::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let mut grants: Vec<String> = settings.env.iter().map(|e| format!("env={e}")).collect();
    grants.extend(settings.allow_hosts.iter().map(|h| format!("allow-hosts={h}")));
    grants.extend(settings.dirs.iter().map(|d| format!("dirs={}", text(d))));
    grants.extend(settings.allow_programs.iter().map(|p| format!("allow-programs={}", text(p))));
    if settings.allow_clocks {
        grants.push("allow-clocks=true".to_string());
    }
    grants
}
