//! `vx plugin add|list|remove|new`: installing a component into the
//! workspace (checked, copied, pinned, configured, precompiled), showing
//! what is installed, removing it, and scaffolding a new plugin crate.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use toml_edit::{Array, DocumentMut, Item, Table, value};

use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::plugin::{Info, LOCK_FILE, Pin, load_bytes_ungranted, read_pin, read_plugin_file, remove_pin, write_pin};

const PLUGIN_HELP: &str = "Examples:
  vx plugin add plugins/dist/junit.wasm          check, copy to .vx/plugins/, pin in vx.lock
  vx plugin add cache.wasm --name team-cache --allow-host https://cache.acme.dev --env CACHE_TOKEN
  vx plugin list
  vx plugin new reporter myreport                scaffold a plugin crate in ./myreport";

/// Add, list, remove and scaffold WebAssembly plugins.
#[derive(Debug, Args)]
#[command(after_help = PLUGIN_HELP)]
pub struct PluginArgs {
    #[command(subcommand)]
    pub action: PluginAction,
}

#[derive(Debug, Subcommand)]
pub enum PluginAction {
    /// Check a component, copy it to .vx/plugins/NAME.wasm, pin it in vx.lock
    /// and add `[plugins.NAME]` to vx.toml. Grants come only from flags.
    Add(AddArgs),
    /// The installed plugins: kind, version, pin state, grants and requests.
    List,
    /// Remove a plugin: its `[plugins.NAME]` table, its pin and its copy.
    Remove { name: String },
    /// Scaffold a plugin crate: KIND is reporter, cache-backend or executor.
    New {
        kind: String,
        name: String,
        /// Where to create it (default: ./NAME).
        #[arg(long = "dir", id = "new_dir", value_name = "DIR")]
        new_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The component (.wasm) to add.
    pub path: PathBuf,
    /// The plugin's name in vx.toml (default: the file name).
    #[arg(long)]
    pub name: Option<String>,
    /// Grant outgoing HTTP to a host (`https://cache.acme.dev`, `*.acme.dev:443`).
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// Grant an environment variable, by exact name.
    #[arg(long = "env", value_name = "NAME")]
    pub env: Vec<String>,
    /// Grant a workspace directory, read-only (`DIR`) or read-write (`DIR:rw`).
    #[arg(long = "dir", id = "grant_dir", value_name = "DIR")]
    pub grant_dir: Vec<String>,
    /// Grant a program the plugin may run through vx.
    #[arg(long = "allow-program", value_name = "PROGRAM")]
    pub allow_program: Vec<String>,
    /// Replace a plugin of the same name, and re-pin it.
    #[arg(long)]
    pub force: bool,
}

pub fn cmd_plugin(args: PluginArgs, cwd: &Path) -> Result<u8> {
    match args.action {
        PluginAction::Add(a) => add(a, cwd),
        PluginAction::List => list(cwd),
        PluginAction::Remove { name } => remove(&name, cwd),
        PluginAction::New { kind, name, new_dir } => super::plugin_new::scaffold(&kind, &name, new_dir, cwd),
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn add(args: AddArgs, cwd: &Path) -> Result<u8> {
    let source = cwd.join(&args.path);
    let name = match &args.name {
        Some(n) => n.clone(),
        None => source.file_stem().map(|s| s.to_string_lossy().replace('_', "-")).unwrap_or_default(),
    };
    if !valid_name(&name) {
        return Err(Error::usage(format!("`{name}` is not a plugin name"))
            .with_hint("use lowercase letters, digits, `-` and `_`, starting with a letter (`--name`)"));
    }
    let ws = load_workspace(cwd)?;
    let root = ws.root.clone();
    let existing = read_pin(&root, &name).map_err(|e| Error::config(e.to_string()))?;
    if (ws.plugins.contains_key(&name) || existing.is_some()) && !args.force {
        return Err(Error::usage(format!("a plugin named `{name}` is already added"))
            .with_hint("pass --force to replace and re-pin it, or --name to add it under another name"));
    }
    let (bytes, hash) = read_plugin_file(&name, &source)?;
    let plugin = load_bytes_ungranted(&name, &bytes, hash)?;
    let info = plugin.info()?;

    let rel = format!(".vx/plugins/{name}.wasm");
    let dest = root.join(&rel);
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(format_args!("create {}", dir.display()), e))?;
    }
    if dest != source {
        std::fs::write(&dest, &bytes).map_err(|e| Error::io(format_args!("write {}", dest.display()), e))?;
    }
    let pin = Pin {
        path: rel.clone(),
        blake3: hash.to_hex().to_string(),
        size: bytes.len() as u64,
        exports: plugin.export.clone(),
        plugin_version: info.version.clone(),
        requests: info.requests.clone(),
    };
    write_pin(&root, &name, &pin).map_err(|e| Error::internal(e.to_string()))?;
    let granted = write_plugin_table(&root, &name, &rel, &args)?;

    println!(
        "added `{name}`: {} {} ({}), {} bytes, pinned in {LOCK_FILE} (blake3 {}…)",
        plugin.world.name(),
        info.version,
        plugin.export,
        bytes.len(),
        &pin.blake3[..16]
    );
    if let Some(old) = existing.filter(|o| o.blake3 != pin.blake3) {
        println!("  replaced version {} ({}…)", old.plugin_version, old.blake3.get(..16).unwrap_or_default());
    }
    print_requests(&name, &info, &granted);
    Ok(0)
}

/// Grants in `[plugins.NAME]`, as `key=value` strings like plugin requests.
fn granted_strings(table: &Table) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["env", "allow-hosts", "dirs", "allow-programs"] {
        if let Some(array) = table.get(key).and_then(Item::as_array) {
            for v in array {
                let text = match v {
                    toml_edit::Value::String(s) => s.value().clone(),
                    toml_edit::Value::InlineTable(t) => t
                        .get("path")
                        .or_else(|| t.get("program"))
                        .and_then(|p| p.as_str())
                        .unwrap_or_default()
                        .to_string(),
                    _ => continue,
                };
                out.push(format!("{key}={text}"));
            }
        }
    }
    out
}

/// Writes `[plugins.NAME]` into the root vx.toml, keeping its comments and
/// layout; returns the grants the table holds afterwards.
fn write_plugin_table(root: &Path, name: &str, rel: &str, args: &AddArgs) -> Result<Vec<String>> {
    let path = root.join("vx.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(format_args!("read {}", path.display()), e)),
    };
    let mut doc: DocumentMut =
        text.parse().map_err(|e| Error::config(format!("{}: {e}", path.display())).with_hint("fix vx.toml first"))?;
    let plugins = doc.entry("plugins").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let plugins = plugins.as_table_mut().ok_or_else(|| {
        Error::config("vx.toml: `plugins` is not a table").with_hint("write it as [plugins.NAME] tables")
    })?;
    let table = plugins.entry(name).or_insert_with(|| Item::Table(Table::new()));
    let table = table.as_table_mut().ok_or_else(|| {
        Error::config(format!("vx.toml: `plugins.{name}` is not a table")).with_hint("write it as [plugins.NAME]")
    })?;
    table["path"] = value(rel);
    let dirs: Vec<toml_edit::Value> = args
        .grant_dir
        .iter()
        .map(|d| match d.strip_suffix(":rw") {
            Some(p) => {
                let mut t = toml_edit::InlineTable::new();
                t.insert("path", p.into());
                t.insert("rw", true.into());
                toml_edit::Value::InlineTable(t)
            }
            None => d.as_str().into(),
        })
        .collect();
    let to_values = |v: &[String]| v.iter().map(|s| toml_edit::Value::from(s.as_str())).collect::<Vec<_>>();
    for (key, values) in [
        ("env", to_values(&args.env)),
        ("allow-hosts", to_values(&args.allow_host)),
        ("dirs", dirs),
        ("allow-programs", to_values(&args.allow_program)),
    ] {
        if values.is_empty() {
            continue;
        }
        let array = table.entry(key).or_insert_with(|| value(Array::new()));
        let Some(array) = array.as_array_mut() else {
            return Err(
                Error::config(format!("vx.toml: `plugins.{name}.{key}` is not an array")).with_hint("make it a list")
            );
        };
        for v in values {
            let exists = array.iter().any(|x| x.to_string().trim() == v.to_string().trim());
            if !exists {
                array.push(v);
            }
        }
    }
    let granted = granted_strings(table);
    let tmp = root.join(format!(".vx.toml.{}.tmp", std::process::id()));
    std::fs::write(&tmp, doc.to_string())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| Error::io(format_args!("write {}", path.display()), e))?;
    Ok(granted)
}

fn print_requests(name: &str, info: &Info, granted: &[String]) {
    let missing: Vec<&String> = info.requests.iter().filter(|r| !granted.contains(r)).collect();
    if missing.is_empty() {
        return;
    }
    println!("`{name}` requests grants it does not have yet (nothing is granted by default):");
    for request in missing {
        let (key, val) = request.split_once('=').unwrap_or((request, ""));
        println!("  {request}: add \"{val}\" to `{key}` in [plugins.{name}] of vx.toml");
    }
}

fn list(cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    if ws.plugins.is_empty() {
        println!("no plugins; add one with `vx plugin add PATH`");
        return Ok(0);
    }
    for (name, settings) in &ws.plugins {
        let pin = read_pin(&ws.root, name).map_err(|e| Error::config(e.to_string()))?;
        let file = read_plugin_file(name, &settings.path);
        let (state, compiled) = match (&pin, &file) {
            (_, Err(e)) => (format!("unreadable ({})", e.message), false),
            (None, Ok(_)) => ("not pinned".to_string(), false),
            (Some(p), Ok((_, hash))) if p.blake3 == hash.to_hex().as_str() => {
                ("pinned ok".to_string(), crate::plugin::compiled(hash))
            }
            (Some(_), Ok(_)) => ("DOES NOT MATCH its pin".to_string(), false),
        };
        let (export, version, requests) = pin.map(|p| (p.exports, p.plugin_version, p.requests)).unwrap_or_default();
        println!("{name}");
        println!("  exports   {}", if export.is_empty() { "?" } else { &export });
        println!("  version   {}", if version.is_empty() { "?" } else { &version });
        println!("  file      {} ({state})", settings.path.strip_prefix(&ws.root).unwrap_or(&settings.path).display());
        println!("  compiled  {}", if compiled { "yes" } else { "no" });
        let mut grants: Vec<String> = settings.env.iter().map(|e| format!("env={e}")).collect();
        grants.extend(settings.allow_hosts.iter().map(|h| format!("allow-hosts={h}")));
        grants.extend(
            settings.dirs.iter().map(|d| format!("dirs={}", d.as_str().map_or_else(|| d.to_string(), str::to_string))),
        );
        grants.extend(
            settings
                .allow_programs
                .iter()
                .map(|p| format!("allow-programs={}", p.as_str().map_or_else(|| p.to_string(), str::to_string))),
        );
        println!("  grants    {}", if grants.is_empty() { "none".to_string() } else { grants.join(", ") });
        let ungranted: Vec<String> = requests.iter().filter(|r| !grants.contains(r)).cloned().collect();
        println!("  requests  {}", if requests.is_empty() { "none".to_string() } else { requests.join(", ") });
        if !ungranted.is_empty() {
            println!("  not granted {}", ungranted.join(", "));
        }
    }
    Ok(0)
}

fn remove(name: &str, cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    let path = ws.root.join("vx.toml");
    let mut removed_table = false;
    if let Ok(text) = std::fs::read_to_string(&path) {
        let mut doc: DocumentMut = text.parse().map_err(|e| Error::config(format!("{}: {e}", path.display())))?;
        if let Some(plugins) = doc.get_mut("plugins").and_then(Item::as_table_mut) {
            removed_table = plugins.remove(name).is_some();
            if plugins.is_empty() {
                doc.remove("plugins");
            }
        }
        if removed_table {
            std::fs::write(&path, doc.to_string())
                .map_err(|e| Error::io(format_args!("write {}", path.display()), e))?;
        }
    }
    let removed_pin = remove_pin(&ws.root, name).map_err(|e| Error::internal(e.to_string()))?;
    let copy = ws.root.join(format!(".vx/plugins/{name}.wasm"));
    let removed_copy = std::fs::remove_file(&copy).is_ok();
    if !(removed_table || removed_pin || removed_copy) {
        return Err(Error::usage(format!("no plugin named `{name}`")).with_hint("see `vx plugin list`"));
    }
    println!("removed `{name}`");
    if ws.cache.remote.as_deref() == Some(name) {
        println!("note: [cache] remote still names `{name}`; remove it from vx.toml");
    }
    Ok(0)
}
