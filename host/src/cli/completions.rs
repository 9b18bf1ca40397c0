//! `vx completions SHELL`: shell completion, with task and project names
//! completed from the workspace the shell is in. The script it prints calls
//! back into vx (`COMPLETE=SHELL vx …`, clap_complete's dynamic engine), so
//! names are always current.

use std::ffi::OsStr;

use clap::{Args, ValueEnum};
use clap_complete::CompletionCandidate;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};

use super::choice::{Choice, choice};
use crate::config::load_workspace;
use crate::error::{Error, Result};

/// Print a shell's completion script (task and project names included).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vx completions bash > /etc/bash_completion.d/vx\n  echo 'source <(vx completions zsh)' >> ~/.zshrc\n  vx completions fish > ~/.config/fish/completions/vx.fish"
)]
pub(crate) struct CompletionsArgs {
    /// bash, zsh, fish, powershell or elvish.
    #[arg(value_name = "SHELL", value_parser = choice::<Shell>())]
    pub shell: Shell,
}

/// The shells clap_complete's dynamic engine registers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

impl Choice for Shell {
    const WANTS: &'static str = "bash, zsh, fish, powershell or elvish";

    /// The shell is the command's one argument: the refusal names the command.
    fn refuse(_flag: &str, got: &str, command: &str) -> Error {
        Error::usage(format!("{command} expects {}, got `{got}`", Self::WANTS))
            .with_hint(format!("see `{command} --help`"))
    }
}

pub(crate) fn cmd_completions(args: CompletionsArgs) -> Result<u8> {
    let shell: &dyn EnvCompleter = match args.shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::Powershell => &Powershell,
        Shell::Elvish => &Elvish,
    };
    let mut out = std::io::stdout();
    shell
        .write_registration("COMPLETE", "vx", "vx", "vx", &mut out)
        .map_err(|e| Error::io("write the completion script", e))?;
    Ok(0)
}

fn workspace_names(project_names: bool) -> Vec<String> {
    let Ok(cwd) = std::env::current_dir() else { return Vec::new() };
    let Ok(ws) = load_workspace(&cwd) else { return Vec::new() };
    let mut names: Vec<String> = if project_names {
        ws.projects.iter().map(|p| p.name.clone()).collect()
    } else {
        let mut tasks: Vec<String> = ws.projects.iter().flat_map(|p| p.tasks.keys().cloned()).collect();
        tasks.extend(ws.projects.iter().flat_map(|p| p.tasks.keys().map(move |t| format!("{}#{t}", p.name))));
        tasks
    };
    names.sort();
    names.dedup();
    names
}

fn matching(current: &OsStr, names: Vec<String>) -> Vec<CompletionCandidate> {
    let prefix = current.to_string_lossy();
    names.into_iter().filter(|n| n.starts_with(prefix.as_ref())).map(CompletionCandidate::new).collect()
}

/// Completes `build` and `web#build` from the workspace.
pub(crate) fn complete_tasks(current: &OsStr) -> Vec<CompletionCandidate> {
    matching(current, workspace_names(false))
}

/// Completes project names from the workspace.
pub(crate) fn complete_projects(current: &OsStr) -> Vec<CompletionCandidate> {
    matching(current, workspace_names(true))
}
