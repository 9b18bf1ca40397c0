//! `vx query`: the tasks `vx run` would run for the same selection, one
//! id a line or as JSON (docs/schema/query.v1.json), with why `--affected`
//! chose each and whether `--shard` owns it; nothing is keyed or run.

use std::path::Path;

use clap::Args;
use serde::Serialize;

use super::choice::{Format, choice};
use super::exec_args::SelectionArgs;
use crate::config::load_workspace;
use crate::error::Result;
use crate::graph::Shard;
use crate::plan::{QueriedTask, query};

const QUERY_HELP: &str = "Examples:
  vx query test --affected=origin/main           the test tasks a change affects, one id a line
  vx query build --filter web... --format json   web's build and its dependencies, as JSON
  vx query test --shard 2/4 --format json        the second of four parts, each task marked";

/// List the tasks a run would run, for CI scripts (nothing runs)
#[derive(Debug, Args)]
#[command(after_help = QUERY_HELP)]
pub(crate) struct QueryArgs {
    #[command(flatten)]
    pub select: SelectionArgs,

    /// One of N balanced parts of the selected tasks, as `vx run --shard`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,

    /// `text` (default): each task's id on a line, in dependency order;
    /// `json`: every field, with `--affected`'s reasons.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = choice::<Format>())]
    pub format: Format,
}

pub(crate) fn cmd_query(args: QueryArgs, cwd: &Path) -> Result<u8> {
    let mut selection = args.select.selection(cwd)?;
    selection.shard = args.shard.as_deref().map(Shard::parse).transpose()?;
    let ws = load_workspace(cwd)?;
    let tasks = query(&ws, &selection)?;
    match args.format {
        Format::Text => {
            for task in &tasks {
                println!("{}", task.id);
            }
        }
        Format::Json => {
            let doc = Doc { tasks: &tasks };
            println!("{}", serde_json::to_string_pretty(&doc).expect("the query serializes"));
        }
    }
    Ok(0)
}

/// The JSON document: an object, so fields can be added beside `tasks`.
#[derive(Serialize)]
struct Doc<'a> {
    tasks: &'a [QueriedTask],
}
