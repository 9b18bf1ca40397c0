//! `vx plugin add|list|remove|new`: installing a component into the
//! workspace, showing what is installed, removing it, and scaffolding a
//! new plugin crate. The work is the plugin host's (`plugin::add`,
//! `plugin::installed`, `plugin::remove`, `plugin::scaffold`); this file
//! parses and prints.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::choice::choice;

use crate::config::edit::GrantFlags;
use crate::config::load_workspace;
use crate::error::Result;
use crate::plugin::{AddRequest, Added, Installed, LOCK_FILE, World, first_party, oci};

const PLUGIN_HELP: &str = "Examples:
  vx plugin add junit                            a first-party plugin, built into vx
  vx plugin add plugins/dist/junit.wasm          check, copy to .vx/plugins/, pin in vx.lock
  vx plugin add cache.wasm --name team-cache --allow-host https://cache.acme.dev --env CACHE_TOKEN
  vx plugin add oci://registry.acme.dev/platform/junit:1.0.0    pull, verify its digests, then as above
  vx plugin publish plugins/dist/junit.wasm oci://registry.acme.dev/platform/junit:1.0.0
  vx plugin list
  vx plugin list --available                     the first-party plugins vx carries
  vx plugin new reporter myreport                scaffold a plugin crate in ./myreport";

/// Add, list, remove and scaffold WebAssembly plugins.
#[derive(Debug, Args)]
#[command(after_help = PLUGIN_HELP)]
pub(crate) struct PluginArgs {
    #[command(subcommand)]
    pub action: PluginAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PluginAction {
    /// Check a component, copy it to .vx/plugins/NAME.wasm, pin it in vx.lock
    /// and add `[plugins.NAME]` to vx.toml. Grants come only from flags.
    Add(AddArgs),
    /// The installed plugins: kind, version, pin state, grants and requests.
    List {
        /// The first-party plugins built into vx, which `vx plugin add NAME` adds.
        #[arg(long)]
        available: bool,
    },
    /// Remove a plugin: its `[plugins.NAME]` table, its pin and its copy.
    Remove { name: String },
    /// Check a component and push it to an OCI registry in the Wasm OCI
    /// layout; prints the reference pinned to its digest.
    Publish(PublishArgs),
    /// Scaffold a plugin crate: KIND is reporter, cache-backend, executor, subscriber or command.
    New {
        #[arg(value_parser = choice::<World>())]
        kind: World,
        name: String,
        /// Where to create it (default: ./NAME).
        #[arg(long = "dir", id = "new_dir", value_name = "DIR")]
        new_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// The component (.wasm) to add, a first-party plugin's name (`junit`,
    /// `http-cache`, `sandbox`), or a registry reference
    /// `oci://REGISTRY/NAMESPACE/NAME:TAG` (or `@sha256:DIGEST`).
    #[arg(value_name = "PATH|NAME|OCI")]
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
    /// Let the plugin read the host's real wall and monotonic clocks
    /// (without it they read the Unix epoch and 0).
    #[arg(long = "allow-clocks")]
    pub allow_clocks: bool,
    /// Replace a plugin of the same name, and re-pin it.
    #[arg(long)]
    pub force: bool,
    /// Reach an `oci://` registry over plain HTTP instead of HTTPS.
    #[arg(long)]
    pub plain_http: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PublishArgs {
    /// The component (.wasm) to publish.
    pub file: PathBuf,
    /// Where: `oci://REGISTRY/NAMESPACE/NAME:TAG`.
    pub reference: String,
    /// Reach the registry over plain HTTP instead of HTTPS.
    #[arg(long)]
    pub plain_http: bool,
}

pub(crate) fn cmd_plugin(args: PluginArgs, cwd: &Path) -> Result<u8> {
    match args.action {
        PluginAction::Add(a) => add(a, cwd),
        PluginAction::List { available: false } => list(cwd),
        PluginAction::List { available: true } => list_available(cwd),
        PluginAction::Remove { name } => remove(&name, cwd),
        PluginAction::Publish(a) => publish(a, cwd),
        PluginAction::New { kind, name, new_dir } => super::plugin_new::cmd_new(kind, &name, new_dir, cwd),
    }
}

fn add(args: AddArgs, cwd: &Path) -> Result<u8> {
    let request = AddRequest {
        source: args.path,
        name: args.name,
        grants: GrantFlags {
            env: args.env,
            allow_hosts: args.allow_host,
            dirs: args.grant_dir,
            allow_programs: args.allow_program,
            allow_clocks: args.allow_clocks,
        },
        force: args.force,
    };
    if let Some(target) = request.source.to_str().filter(|p| oci::is_reference(p)) {
        let pulled = oci::add(cwd, target, &request, args.plain_http)?;
        print_added(&pulled.added);
        println!("  from {}", pulled.pinned);
        return Ok(0);
    }
    let added = crate::plugin::add(cwd, &request)?;
    print_added(&added);
    Ok(0)
}

fn publish(args: PublishArgs, cwd: &Path) -> Result<u8> {
    let published = oci::publish(cwd, &args.file, &args.reference, args.plain_http)?;
    println!(
        "published {} {} ({}), {} bytes",
        published.world.name(),
        published.version,
        published.export,
        published.size
    );
    println!("{}", published.reference);
    Ok(0)
}

fn print_added(added: &Added) {
    let name = &added.name;
    println!(
        "added `{name}`: {} {} ({}), {} bytes, pinned in {LOCK_FILE} (blake3 {}…)",
        added.world.name(),
        added.info.version,
        added.export,
        added.size,
        &added.pin.blake3[..16]
    );
    if let Some(old) = &added.replaced {
        println!("  replaced version {} ({}…)", old.plugin_version, old.blake3.get(..16).unwrap_or_default());
    }
    let missing = added.missing_grants();
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
        println!(
            "no plugins; add one with `vx plugin add PATH|NAME` (`vx plugin list --available` shows the built-in ones)"
        );
        return Ok(0);
    }
    for plugin in crate::plugin::installed(&ws)? {
        print_installed(&plugin);
    }
    Ok(0)
}

/// The first-party plugins, and whether this workspace (if vx runs in one)
/// has added each.
fn list_available(cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd).ok();
    for builtin in first_party::ALL {
        let added = ws.as_ref().is_some_and(|ws| ws.plugins.contains_key(builtin.name));
        let state = if added { "added" } else { "available" };
        println!("{:<11} {:<13} {:<9} {}", builtin.name, builtin.world.name(), state, builtin.summary);
        if !builtin.grants_hint.is_empty() && !added {
            println!("{:<35} vx plugin add {} {}", "", builtin.name, builtin.grants_hint);
        }
    }
    Ok(0)
}

fn print_installed(p: &Installed) {
    let or_unknown = |s: &str| if s.is_empty() { "?".to_string() } else { s.to_string() };
    let or_none = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    println!("{}", p.name);
    println!("  exports   {}", or_unknown(&p.exports));
    println!("  version   {}", or_unknown(&p.version));
    println!("  file      {} ({})", p.file.display(), p.state);
    println!("  compiled  {}", if p.compiled { "yes" } else { "no" });
    println!("  grants    {}", or_none(&p.grants));
    println!("  requests  {}", or_none(&p.requests));
    let ungranted = p.ungranted();
    if !ungranted.is_empty() {
        println!("  not granted {}", ungranted.join(", "));
    }
}

fn remove(name: &str, cwd: &Path) -> Result<u8> {
    let removed = crate::plugin::remove(cwd, name)?;
    println!("removed `{name}`");
    if removed.still_cache_remote {
        println!("note: [cache] remote still names `{name}`; remove it from vx.toml");
    }
    Ok(0)
}
