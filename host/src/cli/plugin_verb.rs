//! `vx NAME ARGS…` for a command plugin added as `[plugins.NAME]`, and the
//! "Plugin commands" section of `vx --help`.
//!
//! vx's own commands always win: a verb is looked up among the plugins
//! only when it is none of them (`plugin::RESERVED_VERBS`), and `vx plugin
//! add` refuses a command plugin named like one. A verb that is neither
//! falls through to the command line's "unrecognized subcommand" error.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{find_root, load_workspace};
use crate::error::{Error, Result};
use crate::plugin::{WorkspaceModel, World, help_text, is_reserved, load_configured, read_pin};

/// What follows `vx`: `-C DIR` (the one global flag), then the verb and its
/// arguments. `None` when a flag comes first or an argument is not UTF-8.
struct Invocation {
    dir: Option<PathBuf>,
    verb: Option<String>,
    args: Vec<String>,
}

fn split(argv: &[OsString]) -> Option<Invocation> {
    let mut rest = argv.iter().skip(1).map(|a| a.to_str().map(str::to_string));
    let mut dir = None;
    loop {
        let Some(arg) = rest.next() else {
            return Some(Invocation { dir, verb: None, args: Vec::new() });
        };
        let arg = arg?;
        if arg == "-C" {
            dir = Some(PathBuf::from(rest.next()??));
        } else if let Some(value) = arg.strip_prefix("-C") {
            dir = Some(PathBuf::from(value.strip_prefix('=').unwrap_or(value)));
        } else if arg.starts_with('-') {
            return Some(Invocation { dir, verb: Some(arg), args: Vec::new() });
        } else {
            let args = rest.collect::<Option<Vec<String>>>()?;
            return Some(Invocation { dir, verb: Some(arg), args });
        }
    }
}

/// The names in the root `vx.toml`'s `[plugins]`, without loading the
/// workspace (a plain read: this runs before every unknown verb and help).
fn configured_plugins(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join("vx.toml")) else {
        return Vec::new();
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    doc.get("plugins").and_then(toml::Value::as_table).map(|t| t.keys().cloned().collect()).unwrap_or_default()
}

/// Runs a command plugin when `argv` names one; `None` hands `argv` to
/// the command line as it is.
pub(crate) fn dispatch(argv: &[OsString]) -> Option<Result<u8>> {
    let Invocation { dir, verb: Some(verb), args } = split(argv)? else {
        return None;
    };
    if verb.starts_with('-') || is_reserved(&verb) {
        return None;
    }
    let cwd = match super::working_dir(dir) {
        Ok(cwd) => cwd,
        Err(e) => return Some(Err(e)),
    };
    let root = find_root(&cwd).ok()?;
    if !configured_plugins(&root).contains(&verb) {
        return None;
    }
    Some(run(&cwd, &verb, &args))
}

fn run(cwd: &Path, verb: &str, args: &[String]) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    let settings = ws.plugins.get(verb).ok_or_else(|| Error::internal(format!("[plugins.{verb}] went missing")))?;
    let plugin = load_configured(&ws.root, verb, settings)?;
    if plugin.world != World::Command {
        return Err(Error::usage(format!(
            "`vx {verb}`: plugin `{verb}` is a {} plugin, not a command",
            plugin.world.name()
        ))
        .with_hint("run `vx --help` for the commands"));
    }
    if matches!(args, [flag] if flag == "--help" || flag == "-h") {
        println!("{}", help_text(&plugin.command_usage()?));
        return Ok(0);
    }
    Ok(plugin.run_command(Arc::new(WorkspaceModel::new(&ws)), args)?)
}

/// Whether `argv` asks for vx's own help page (`vx`, `vx --help`, `vx -h`,
/// `vx help`), which then lists the workspace's plugin commands.
fn wants_top_level_help(argv: &[OsString]) -> Option<PathBuf> {
    let Invocation { dir, verb, args } = split(argv)?;
    let top = match verb.as_deref() {
        None => true,
        Some("-h" | "--help" | "help") => args.is_empty(),
        Some(_) => false,
    };
    top.then(|| dir.unwrap_or_default())
}

/// "Plugin commands:" and one line per command plugin of the workspace
/// that `argv` runs in, from the pins in `vx.lock` (nothing is loaded);
/// empty when `argv` is not a top-level help request or there are none.
pub(crate) fn help_section(argv: &[OsString]) -> String {
    let Some(dir) = wants_top_level_help(argv) else {
        return String::new();
    };
    let Ok(cwd) = super::working_dir(Some(dir)) else {
        return String::new();
    };
    let Ok(root) = find_root(&cwd) else {
        return String::new();
    };
    let mut lines = Vec::new();
    for name in configured_plugins(&root) {
        let Ok(Some(pin)) = read_pin(&root, &name) else { continue };
        if pin.exports.starts_with("vx:plugin/verb@") && !is_reserved(&name) {
            lines.push(format!("  {name:<14} {}", pin.about.unwrap_or_default()));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("\n\nPlugin commands (this workspace's command plugins; `vx NAME --help`):\n{}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::RESERVED_VERBS;

    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once("vx").chain(args.iter().copied()).map(OsString::from).collect()
    }

    #[test]
    fn every_built_in_command_and_alias_is_reserved() {
        let command = <super::super::app::Cli as clap::CommandFactory>::command();
        for sub in command.get_subcommands() {
            for name in std::iter::once(sub.get_name()).chain(sub.get_all_aliases()) {
                assert!(RESERVED_VERBS.contains(&name), "`{name}` is a vx command but not in RESERVED_VERBS");
            }
        }
    }

    #[test]
    fn the_verb_comes_after_dash_c_and_keeps_its_arguments() {
        let inv = split(&argv(&["-C", "ws", "release-notes", "--since", "v1.2"])).unwrap();
        assert_eq!((inv.dir, inv.verb.as_deref()), (Some(PathBuf::from("ws")), Some("release-notes")));
        assert_eq!(inv.args, ["--since", "v1.2"]);
        let inv = split(&argv(&["-Cws", "notes"])).unwrap();
        assert_eq!((inv.dir, inv.verb.as_deref()), (Some(PathBuf::from("ws")), Some("notes")));
        assert_eq!(split(&argv(&["--version"])).unwrap().verb.as_deref(), Some("--version"));
        assert!(dispatch(&argv(&["run", "build"])).is_none(), "a built-in is never a plugin");
        assert!(dispatch(&argv(&["--help"])).is_none());
    }

    #[test]
    fn only_a_top_level_help_request_lists_plugin_commands() {
        assert!(wants_top_level_help(&argv(&[])).is_some());
        assert!(wants_top_level_help(&argv(&["--help"])).is_some());
        assert!(wants_top_level_help(&argv(&["-C", "x", "help"])).is_some());
        assert!(wants_top_level_help(&argv(&["help", "run"])).is_none());
        assert!(wants_top_level_help(&argv(&["run", "--help"])).is_none());
    }
}
