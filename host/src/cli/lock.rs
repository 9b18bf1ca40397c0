//! `vx lock [--check]`: write `vx.lock`, or check that it matches the
//! configuration (for CI).

use std::path::Path;

use clap::Args;

use crate::config::{Command, Workspace, load_workspace};
use crate::error::{Error, Result};
use crate::lock::{LOCK_FILE, Lock, diff_locks, find_secret};

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
    let lock = Lock::of(&ws);
    if args.check {
        let Some(old) = Lock::read(&ws.root).map_err(Error::config)? else {
            return Err(Error::new(crate::error::ErrorKind::TaskFailed, format!("there is no {LOCK_FILE}"))
                .with_hint("run `vx lock` and commit the file"));
        };
        let changes = diff_locks(&old, &lock);
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
    refuse_secrets(&ws)?;
    lock.write(&ws.root).map_err(Error::internal)?;
    let tasks: usize = lock.projects.values().map(|p| p.tasks.len()).sum();
    println!("wrote {LOCK_FILE}: {} project(s), {tasks} task(s)", lock.projects.len());
    Ok(0)
}

/// Refuses to lock a task whose command looks like it holds a credential.
fn refuse_secrets(ws: &Workspace) -> Result<()> {
    for p in &ws.projects {
        for t in p.tasks.values() {
            let command = match &t.command {
                Command::Shell(s) => s.clone(),
                Command::Argv(a) => a.join(" "),
            };
            let fields = [
                ("command", command),
                ("inputs", t.inputs.clone().unwrap_or_default().join(" ")),
                ("outputs", t.outputs.join(" ")),
            ];
            for (field, text) in fields {
                if let Some(why) = find_secret(&text) {
                    return Err(Error::config(format!(
                        "refusing to write {LOCK_FILE}: project `{}`, task `{}`, field `{field}` holds what looks like a credential ({why})",
                        p.name, t.name
                    ))
                    .with_hint("read it from the environment when the task runs (list the variable's name in `env`) instead of writing it in the config"));
                }
            }
        }
    }
    Ok(())
}

/// `vx run --frozen`: the configuration must match vx.lock.
pub fn check_frozen(ws: &Workspace) -> Result<()> {
    let Some(old) = Lock::read(&ws.root).map_err(Error::config)? else {
        return Err(Error::config(format!("--frozen needs a {LOCK_FILE}, and there is none"))
            .with_hint("run `vx lock` and commit it"));
    };
    let changes = diff_locks(&old, &Lock::of(ws));
    match changes.first() {
        None => Ok(()),
        Some(first) => {
            let more = if changes.len() > 1 { format!(" (and {} more)", changes.len() - 1) } else { String::new() };
            Err(Error::config(format!("--frozen: {LOCK_FILE} does not match the configuration: {first}{more}"))
                .with_hint("run `vx lock --check` to see every change, and `vx lock` to update the file"))
        }
    }
}
