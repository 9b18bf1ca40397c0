//! `vx plugin new KIND NAME`: a plugin crate that builds as is, with
//! `cargo build --release --target wasm32-wasip2` (or, inside the vx
//! repository, `scripts/build-plugins DIR`), depending on the SDK by path
//! when it is made inside a vx checkout.

use std::path::{Path, PathBuf};

use super::World;
use crate::error::{Error, Result};

/// Writes a `world` plugin crate named `name` into `dest` (which must not
/// exist, or be empty); returns the crate's Rust identifier (`my_report`).
pub(crate) fn scaffold(world: World, name: &str, dest: &Path) -> Result<String> {
    let body = match world {
        World::Reporter => REPORTER,
        World::CacheBackend => CACHE_BACKEND,
        World::Executor => EXECUTOR,
        World::Subscriber => SUBSCRIBER,
        World::Command => COMMAND,
    };
    let valid = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        return Err(Error::usage(format!("`{name}` is not a plugin name"))
            .with_hint("use lowercase letters, digits and `-`, starting with a letter"));
    }
    if dest.exists() && std::fs::read_dir(dest).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(
            Error::usage(format!("{} exists and is not empty", dest.display())).with_hint("pick another name or --dir")
        );
    }
    std::fs::create_dir_all(dest.join("src")).map_err(|e| Error::io(format_args!("create {}", dest.display()), e))?;
    let sdk = match find_sdk(dest) {
        Some(path) => format!("{{ path = \"{}\" }}", path.display()),
        None => "\"0.1\"".to_string(),
    };
    let ident = name.replace('-', "_");
    let type_name: String = name
        .split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect();
    let fill = |text: &str| {
        text.replace("{name}", name)
            .replace("{ident}", &ident)
            .replace("{Type}", &type_name)
            .replace("{sdk}", &sdk)
            .replace("{kind}", world.name())
    };
    let files = [("Cargo.toml", fill(CARGO_TOML)), ("src/lib.rs", fill(body)), ("README.md", fill(README))];
    for (file, text) in files {
        let path = dest.join(file);
        std::fs::write(&path, text).map_err(|e| Error::io(format_args!("write {}", path.display()), e))?;
    }
    Ok(ident)
}

/// The vx repository's `sdk/`, when `dest` is inside a checkout, as a path
/// relative to `dest`.
fn find_sdk(dest: &Path) -> Option<PathBuf> {
    let dest = crate::paths::normalize_lexically(dest);
    for ancestor in dest.ancestors().skip(1) {
        let manifest = ancestor.join("sdk/Cargo.toml");
        if std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("name = \"vx-plugin-sdk\"")) {
            let up = dest.strip_prefix(ancestor).ok()?.components().count();
            let mut rel = PathBuf::new();
            for _ in 0..up {
                rel.push("..");
            }
            return Some(rel.join("sdk"));
        }
    }
    None
}

const CARGO_TOML: &str = r#"[package]
name = "{name}"
description = "A vx {kind} plugin."
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib"]

[dependencies]
serde = { version = "1", features = ["derive"] }
vx-plugin-sdk = {sdk}

# Its own workspace, so it builds wherever it is.
[workspace]

# Small components that load fast; keep the name section for readable traps.
[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
panic = "abort"
strip = "debuginfo"
"#;

const REPORTER: &str = r#"//! `{name}`: a vx reporter. `vx run build --report {name} --report-file out.txt`.

use serde::Deserialize;
use vx_plugin_sdk::reporter::{Reporter, Run, Status};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_reporter};

/// `[plugins.{name}.config]` in vx.toml.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    title: Option<String>,
}

struct {Type};

impl Describe for {Type} {
    fn info() -> PluginInfo {
        PluginInfo::new("{name}", env!("CARGO_PKG_VERSION"))
    }
}

impl Reporter for {Type} {
    type Config = Config;

    fn render(config: &Config, run: &Run) -> Result<Vec<u8>, Error> {
        let title = config.title.as_deref().unwrap_or("vx run");
        let mut out = format!("{title}: {} tasks\n", run.tasks.len());
        for task in &run.tasks {
            let status = if task.status == Status::Ok { "ok" } else { "not ok" };
            out.push_str(&format!("{status} {}#{} {}ms\n", task.project, task.task, task.duration_ms));
        }
        Ok(out.into_bytes())
    }
}

export_reporter!({Type});
"#;

const CACHE_BACKEND: &str = r#"//! `{name}`: a vx cache backend. Set `[cache] remote = "{name}"` in vx.toml.
//! This skeleton stores nothing (every lookup is a miss); replace the
//! bodies with calls to your store (`vx_plugin_sdk::blob` streams the bytes).

use vx_plugin_sdk::cache_backend::{BlobReader, BlobWriter, CacheBackend};
use vx_plugin_sdk::{Describe, Error, NoConfig, PluginInfo, export_cache_backend};

struct {Type};

impl Describe for {Type} {
    fn info() -> PluginInfo {
        PluginInfo::new("{name}", env!("CARGO_PKG_VERSION"))
    }
}

impl CacheBackend for {Type} {
    type Config = NoConfig;

    fn exists(_config: &NoConfig, keys: &[String]) -> Result<Vec<bool>, Error> {
        Ok(vec![false; keys.len()])
    }

    fn get(_config: &NoConfig, _key: &str, _sink: &BlobWriter) -> Result<bool, Error> {
        Ok(false)
    }

    fn put(_config: &NoConfig, _key: &str, _size: u64, _source: &BlobReader) -> Result<(), Error> {
        Ok(())
    }
}

export_cache_backend!({Type});
"#;

const EXECUTOR: &str = r#"//! `{name}`: a vx executor. Set `executor = "{name}"` on a task in vx.toml,
//! and grant the programs it starts: `allow-programs = ["sh"]` in
//! `[plugins.{name}]`. This skeleton runs the task's command as is.

use vx_plugin_sdk::executor::{Command, Executor, Outcome, OutputSink, Task, forward_output, spawn};
use vx_plugin_sdk::{Describe, Error, NoConfig, PluginInfo, export_executor};

struct {Type};

impl Describe for {Type} {
    fn info() -> PluginInfo {
        PluginInfo::new("{name}", env!("CARGO_PKG_VERSION"))
    }
}

impl Executor for {Type} {
    type Config = NoConfig;

    fn execute(_config: &NoConfig, task: Task, out: &OutputSink) -> Result<Outcome, Error> {
        let started = std::time::Instant::now();
        let (program, args) = task.argv.split_first().ok_or_else(|| Error::failed("the task has no command"))?;
        let child = spawn(&Command::new(program.as_str()).args(args.iter().cloned()))?;
        let exit_code = forward_output(&child, out)?;
        Ok(Outcome { exit_code, duration_ms: started.elapsed().as_millis() as u64 })
    }
}

export_executor!({Type});
"#;

const SUBSCRIBER: &str = r#"//! `{name}`: a vx subscriber. Once added, it gets the events of every
//! `vx run` as they happen; it can send them out over
//! `vx_plugin_sdk::http` to hosts granted with `allow-hosts` in
//! `[plugins.{name}]`. This skeleton counts what it saw and logs it.

use vx_plugin_sdk::subscriber::{Event, EventKind, Subscriber};
use vx_plugin_sdk::{Describe, Error, NoConfig, PluginInfo, export_subscriber, log};

/// One value lives for the whole run: keep what you need between calls.
#[derive(Default)]
struct {Type} {
    tasks: u32,
}

impl Describe for {Type} {
    fn info() -> PluginInfo {
        PluginInfo::new("{name}", env!("CARGO_PKG_VERSION"))
    }
}

impl Subscriber for {Type} {
    type Config = NoConfig;

    fn on_events(&mut self, _config: &NoConfig, events: Vec<Event>) -> Result<(), Error> {
        for event in events {
            match event.kind {
                EventKind::TaskFinished(_) => self.tasks += 1,
                EventKind::RunFinished(run) => {
                    log::info(&format!("{} tasks, exit code {}", self.tasks, run.exit_code));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

export_subscriber!({Type});
"#;

const COMMAND: &str = r#"//! `{name}`: a vx command. Once added, `vx {name} ARGS...` runs it with
//! the arguments after its name; what it prints goes to vx's stdout and
//! stderr. It reads the workspace through `vx_plugin_sdk::command::workspace`
//! (projects, tasks, history); files, env and hosts need grants in
//! `[plugins.{name}]`. This skeleton lists the projects and their tasks.

use vx_plugin_sdk::command::{Command, Usage, workspace};
use vx_plugin_sdk::{Describe, Error, NoConfig, PluginInfo, export_command};

struct {Type};

impl Describe for {Type} {
    fn info() -> PluginInfo {
        PluginInfo::new("{name}", env!("CARGO_PKG_VERSION"))
    }
}

impl Command for {Type} {
    type Config = NoConfig;

    fn usage() -> Usage {
        Usage {
            about: "lists the workspace's projects and their tasks".to_string(),
            help: "usage: vx {name} [PROJECT...]\n\nLists each project (or the ones named) with its tasks.".to_string(),
        }
    }

    fn run(_config: &NoConfig, args: Vec<String>) -> Result<u8, Error> {
        let projects = workspace::projects();
        for name in &args {
            if !projects.iter().any(|p| &p.name == name) {
                eprintln!("{name}: no such project");
                return Ok(2);
            }
        }
        for project in projects.iter().filter(|p| args.is_empty() || args.contains(&p.name)) {
            let tasks: Vec<&str> = project.tasks.iter().map(|t| t.name.as_str()).collect();
            println!("{} ({}): {}", project.name, project.dir, tasks.join(", "));
        }
        Ok(0)
    }
}

export_command!({Type});
"#;

const README: &str = r#"# {name}

A vx {kind} plugin, written with vx-plugin-sdk 0.1 (loads in vx 0.1.x).

Build the component:

    cargo build --release --target wasm32-wasip2

(`rustup target add wasm32-wasip2` once; inside the vx repository,
`scripts/build-plugins <this dir>` also works where rustup cannot add the
target.) Then add it to your workspace:

    vx plugin add target/wasm32-wasip2/release/{ident}.wasm --name {name}

`vx plugin add` copies it to `.vx/plugins/{name}.wasm`, pins its hash in
`vx.lock` and writes `[plugins.{name}]` into `vx.toml`. Grants (files, env,
hosts) are given there; nothing is granted by default.
"#;
