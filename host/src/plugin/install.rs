//! `vx plugin add` and `vx plugin remove`: a component (a file, a
//! first-party plugin by name, or bytes pulled from a registry) checked (it
//! loads, with no grant), copied to `.vx/plugins/NAME.wasm`, pinned in `vx.lock`
//! and configured in `[plugins.NAME]` of the root `vx.toml`; and all three
//! undone. Grants come only from what the user passed.

use std::path::{Path, PathBuf};

use super::{Info, Pin, World, first_party, load_bytes_ungranted, read_pin, read_plugin_file, remove_pin, write_pin};
use crate::config::edit::{GrantFlags, add_plugin_table, remove_plugin_table};
use crate::config::load_workspace_for_plugin_edits as load_workspace;
use crate::error::{Error, Result};

/// What `vx plugin add` was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct AddRequest {
    /// The component, as a path the user gave (relative to where vx runs),
    /// or the name of a first-party plugin.
    pub source: PathBuf,
    /// The name in `vx.toml`; default: the file name.
    pub name: Option<String>,
    pub grants: GrantFlags,
    /// Replace a plugin of the same name, and re-pin it.
    pub force: bool,
}

/// A plugin that was added.
#[derive(Debug)]
pub(crate) struct Added {
    pub name: String,
    pub world: World,
    pub export: String,
    pub info: Info,
    pub size: usize,
    pub pin: Pin,
    /// The pin it replaced (`--force`), when its file differed.
    pub replaced: Option<Pin>,
    /// The grants `[plugins.NAME]` holds now, as `key=value`.
    pub granted: Vec<String>,
}

impl Added {
    /// What the plugin requests and was not granted.
    pub(crate) fn missing_grants(&self) -> Vec<&String> {
        self.info.requests.iter().filter(|r| !self.granted.contains(r)).collect()
    }
}

/// A plugin that was removed.
#[derive(Debug)]
pub(crate) struct Removed {
    /// `[cache] remote` still names it.
    pub still_cache_remote: bool,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Adds the component of `request` to the workspace that contains `cwd`:
/// the file it names, or, when no such file exists and it is a bare name,
/// the first-party plugin of that name built into vx (`first_party`).
pub(crate) fn add(cwd: &Path, request: &AddRequest) -> Result<Added> {
    let source = cwd.join(&request.source);
    let bare = request.source.components().count() == 1 && request.source.extension().is_none();
    if bare && !source.is_file() {
        let given = request.source.to_string_lossy();
        let Some(builtin) = first_party::by_name(&given) else {
            let names: Vec<&str> = first_party::ALL.iter().map(|p| p.name).collect();
            return Err(Error::usage(format!("no file `{given}` and no first-party plugin of that name")).with_hint(
                format!("give a path to a .wasm component, an oci:// reference, or one of {}", names.join(", ")),
            ));
        };
        let name = request.name.clone().unwrap_or_else(|| builtin.name.to_string());
        return add_bytes(cwd, &name, builtin.bytes, builtin.hash(), None, request);
    }
    let name = match &request.name {
        Some(n) => n.clone(),
        None => source.file_stem().map(|s| s.to_string_lossy().replace('_', "-")).unwrap_or_default(),
    };
    check_name(&name)?;
    let (bytes, hash) = read_plugin_file(&name, &source)?;
    add_bytes(cwd, &name, &bytes, hash, Some(&source), request)
}

fn check_name(name: &str) -> Result<()> {
    if valid_name(name) {
        return Ok(());
    }
    Err(Error::usage(format!("`{name}` is not a plugin name"))
        .with_hint("use lowercase letters, digits, `-` and `_`, starting with a letter (`--name`)"))
}

/// Adds a component given as bytes under `name`: checks that it loads with
/// no grant, copies it to `.vx/plugins/NAME.wasm` (unless `source` is that
/// file already), pins it and writes `[plugins.NAME]`.
pub(crate) fn add_bytes(
    cwd: &Path,
    name: &str,
    bytes: &[u8],
    hash: blake3::Hash,
    source: Option<&Path>,
    request: &AddRequest,
) -> Result<Added> {
    check_name(name)?;
    let ws = load_workspace(cwd)?;
    let root = ws.root.clone();
    let existing = read_pin(&root, name).map_err(|e| Error::config(e.to_string()))?;
    if (ws.plugins.contains_key(name) || existing.is_some()) && !request.force {
        return Err(Error::usage(format!("a plugin named `{name}` is already added"))
            .with_hint("pass --force to replace and re-pin it, or --name to add it under another name"));
    }
    let plugin = load_bytes_ungranted(name, bytes, hash)?;
    let info = plugin.info()?;
    let about = match plugin.world {
        World::Command if super::is_reserved(name) => {
            return Err(Error::usage(format!("`{name}` is one of vx's own commands; a command plugin cannot take it"))
                .with_hint("add it under another name with --name"));
        }
        World::Command => Some(plugin.command_usage()?.about),
        _ => None,
    };

    let rel = format!(".vx/plugins/{name}.wasm");
    copy_into(&root.join(&rel), source, bytes)?;
    let pin = Pin {
        path: rel.clone(),
        blake3: hash.to_hex().to_string(),
        size: bytes.len() as u64,
        exports: plugin.export.clone(),
        plugin_version: info.version.clone(),
        requests: info.requests.clone(),
        about,
    };
    write_pin(&root, name, &pin).map_err(|e| Error::internal(e.to_string()))?;
    let granted = add_plugin_table(&root, name, &rel, &request.grants)?;
    let replaced = existing.filter(|old| old.blake3 != pin.blake3);
    Ok(Added {
        name: name.to_string(),
        world: plugin.world,
        export: plugin.export.clone(),
        info,
        size: bytes.len(),
        pin,
        replaced,
        granted,
    })
}

/// Writes the component's bytes to `dest`, unless it is already there.
fn copy_into(dest: &Path, source: Option<&Path>, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(format_args!("create {}", dir.display()), e))?;
    }
    if source != Some(dest) {
        std::fs::write(dest, bytes).map_err(|e| Error::io(format_args!("write {}", dest.display()), e))?;
    }
    Ok(())
}

/// Removes plugin `name` from the workspace that contains `cwd`: its
/// `[plugins.NAME]` table, its pin and its copy; refused when none exists.
pub(crate) fn remove(cwd: &Path, name: &str) -> Result<Removed> {
    let ws = load_workspace(cwd)?;
    let removed_table = remove_plugin_table(&ws.root, name)?;
    let removed_pin = remove_pin(&ws.root, name).map_err(|e| Error::internal(e.to_string()))?;
    let copy = ws.root.join(format!(".vx/plugins/{name}.wasm"));
    let removed_copy = std::fs::remove_file(&copy).is_ok();
    if !(removed_table || removed_pin || removed_copy) {
        return Err(Error::usage(format!("no plugin named `{name}`")).with_hint("see `vx plugin list`"));
    }
    Ok(Removed { still_cache_remote: ws.cache.remote.as_deref() == Some(name) })
}
