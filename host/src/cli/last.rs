//! `vx last`: the last invocation in this workspace as one line that can be
//! pasted to run it again (with a `cd` in front when it ran elsewhere).
//!
//! History keeps the directory the command was typed in, not the one `-C`
//! pointed at: the line holds `-C DIR` as typed, so it resolves from the
//! caller's directory, and a `cd` to DIR in front would make it DIR/DIR.

use std::path::Path;

use clap::Args;

use crate::cache::state_dir;
use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::history::History;
use crate::session::caller_dir;
use crate::units::shell_quote;

/// Print the last invocation as one paste-able line.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  $(vx last)    run the last command again")]
pub struct LastArgs {}

pub fn cmd_last(_args: LastArgs, cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    let history = History::open(&state_dir(&ws).join("history.db"))
        .map_err(|e| Error::internal(format!("could not read .vx/history.db: {e}")))?;
    let last = history.recent(1).map_err(|e| Error::internal(format!("could not read .vx/history.db: {e}")))?;
    let Some(last) = last.into_iter().next() else {
        return Err(
            Error::usage("no invocation recorded in this workspace yet").with_hint("run one, e.g. `vx run build`")
        );
    };
    if Path::new(&last.cwd) == caller_dir(cwd) {
        println!("{}", last.command);
    } else {
        println!("cd {} && {}", shell_quote(&last.cwd), last.command);
    }
    Ok(0)
}
