//! `vx info`: the doctor (`crate::info`). Exit 0 when it found no
//! problem, 1 when it found some, so a CI step can gate on it.

use std::path::Path;

use clap::Args;

use super::choice::{Format, choice};
use crate::error::{Error, Result};
use crate::info::{Options, gather, render};

/// Doctor: the workspace, cache, remote, plugins and kernel, with each problem's fix.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vx info\n  vx info --format json\n  vx info --offline    do not connect to the remote cache\n\nExit status: 0 with no problems found, 1 with some."
)]
pub(crate) struct InfoArgs {
    /// `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = choice::<Format>())]
    pub format: Format,

    /// Do not connect to the remote cache (or load its plugin).
    #[arg(long)]
    pub offline: bool,
}

pub(crate) fn cmd_info(args: InfoArgs, cwd: &Path) -> Result<u8> {
    let info = gather(cwd, Options { check_remote: !args.offline });
    match args.format {
        Format::Text => print!("{}", render(&info)),
        Format::Json => {
            let text = serde_json::to_string_pretty(&info)
                .map_err(|e| Error::io("write the report", std::io::Error::other(e)))?;
            println!("{text}");
        }
    }
    Ok(u8::from(!info.problems.is_empty()))
}
