//! `vx prune`: some projects, their workspace dependencies and a pruned
//! lockfile in a directory of their own (`crate::prune`).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::config::load_workspace;
use crate::error::Result;
use crate::prune::{PruneOptions, prune};

/// Copy projects, their workspace dependencies and a pruned lockfile into a directory.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  vx prune web\n  vx prune web api --out build/web --docker")]
pub(crate) struct PruneArgs {
    /// The projects to keep; their workspace dependencies come with them.
    #[arg(required = true, value_name = "PROJECT", add = clap_complete::ArgValueCompleter::new(super::completions::complete_projects))]
    pub projects: Vec<String>,

    /// Where to write (absent or empty).
    #[arg(long, value_name = "DIR", default_value = "out", alias = "out-dir")]
    pub out: PathBuf,

    /// Turborepo's layout for Docker: json/ for the install, full/ for the sources.
    #[arg(long)]
    pub docker: bool,
}

pub(crate) fn cmd_prune(args: PruneArgs, cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    let out = cwd.join(&args.out);
    let pruned = prune(&ws, &PruneOptions { projects: args.projects, out: out.clone(), docker: args.docker })?;
    let lockfile = pruned.lockfile.map_or_else(|| "no lockfile".to_string(), |l| format!("a pruned {l}"));
    println!(
        "pruned to {} of {} projects ({}) with {lockfile} in {}",
        pruned.projects.len(),
        ws.projects.len(),
        pruned.projects.join(", "),
        args.out.display()
    );
    Ok(0)
}
