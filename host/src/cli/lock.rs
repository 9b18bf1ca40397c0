//! `vx lock [--check]`: write `vx.lock`, or check that it matches the
//! configuration (for CI).

use std::path::Path;

use clap::Args;

use crate::config::load_workspace;
use crate::error::Result;
use crate::lock::LOCK_FILE;

/// Write vx.lock (the resolved tasks of every project), or check it.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vx lock            write vx.lock\n  vx lock --check    exit 1 with the differences when vx.lock is out of date\n  vx run build --frozen   refuse to run when vx.lock is out of date"
)]
pub struct LockArgs {
    /// Do not write: compare vx.lock with the configuration.
    #[arg(long)]
    pub check: bool,
}

pub fn cmd_lock(args: LockArgs, cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    if args.check {
        let changes = crate::lock::check(&ws)?;
        if changes.is_empty() {
            println!("{LOCK_FILE} is up to date");
            return Ok(0);
        }
        println!("{LOCK_FILE} is out of date:");
        for c in &changes {
            println!("  {c}");
        }
        eprintln!(
            "vx: error: {LOCK_FILE} does not match the configuration ({} change(s)); run `vx lock`",
            changes.len()
        );
        return Ok(1);
    }
    let lock = crate::lock::update(&ws)?;
    let tasks: usize = lock.projects.values().map(|p| p.tasks.len()).sum();
    println!("wrote {LOCK_FILE}: {} project(s), {tasks} task(s)", lock.projects.len());
    Ok(0)
}
