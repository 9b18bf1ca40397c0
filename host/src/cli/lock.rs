//! `vx lock [--check]`: write `vx.lock`, or check that it matches the
//! configuration and that no dependency breaks `[[workspace.boundaries]]`
//! (for CI).

use std::path::Path;

use clap::Args;

use crate::config::{BOUNDARY_HINT, Workspace, load_workspace, load_workspace_with_violations};
use crate::error::{Error, Result};
use crate::lock::LOCK_FILE;

/// Write vx.lock (the resolved tasks of every project), or check it.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vx lock            write vx.lock\n  vx lock --check    exit 1 with the differences when vx.lock is out of date, 2 with every dependency [[workspace.boundaries]] refuses\n  vx run build --frozen   refuse to run when vx.lock is out of date"
)]
pub(crate) struct LockArgs {
    /// Do not write: compare vx.lock with the configuration, and list every dependency the workspace's boundaries refuse.
    #[arg(long)]
    pub check: bool,
}

pub(crate) fn cmd_lock(args: LockArgs, cwd: &Path) -> Result<u8> {
    if args.check {
        return check(cwd);
    }
    let ws = load_workspace(cwd)?;
    let lock = crate::lock::update(&ws)?;
    let tasks: usize = lock.projects.values().map(|p| p.tasks.len()).sum();
    println!("wrote {LOCK_FILE}: {} project(s), {tasks} task(s)", lock.projects.len());
    Ok(0)
}

/// `--check`: every boundary violation, one located line each, then the
/// lock's differences. Violations are configuration errors (exit 2); a
/// stale lock alone exits 1.
fn check(cwd: &Path) -> Result<u8> {
    let (ws, violations) = load_workspace_with_violations(cwd)?;
    for v in &violations {
        eprintln!("vx: error: {v}");
    }
    let lock = check_lock(&ws);
    if violations.is_empty() {
        return lock;
    }
    if let Err(e) = lock {
        eprintln!("vx: error: {e}");
    }
    let n = violations.len();
    let what = if n == 1 { "1 dependency breaks" } else { &format!("{n} dependencies break") };
    Err(Error::config(format!("{what} [[workspace.boundaries]]")).with_hint(BOUNDARY_HINT))
}

fn check_lock(ws: &Workspace) -> Result<u8> {
    let changes = crate::lock::check(ws)?;
    if changes.is_empty() {
        println!("{LOCK_FILE} is up to date");
        return Ok(0);
    }
    println!("{LOCK_FILE} is out of date:");
    for c in &changes {
        println!("  {c}");
    }
    eprintln!("vx: error: {LOCK_FILE} does not match the configuration ({} change(s)); run `vx lock`", changes.len());
    Ok(1)
}
