//! `vx watch`: the selection of `vx run`, run once and then again for each
//! change that affects it.

use std::path::Path;

use clap::Args;

use super::exec_args::{ExecArgs, runtime};
use crate::error::Result;
use crate::watch::{WatchRequest, watch};

const WATCH_HELP: &str = "Examples:
  vx watch build                 rebuild what each change affects
  vx watch web#dev               run a server and restart it when its inputs change
  vx watch test --filter ...ui   re-test ui and its dependents on change

Environment: VX_WATCH_POLL=MS polls instead of using the OS watcher;
VX_WATCH_DEBOUNCE_MS sets the quiet window that ends a burst of changes (50).";

/// Run tasks, then re-run what each file change affects.
#[derive(Debug, Args)]
#[command(after_help = WATCH_HELP)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    pub exec: ExecArgs,
}

pub(crate) fn cmd_watch(args: WatchArgs, cwd: &Path, argv: &[String]) -> Result<u8> {
    let prepared = args.exec.prepare(cwd, "watch")?;
    let request = WatchRequest {
        cwd: cwd.to_path_buf(),
        selection: prepared.selection,
        opts: prepared.opts,
        cache_dir: prepared.cache_dir,
        cache_mode: prepared.cache_mode,
        force: prepared.force,
        argv: argv.to_vec(),
    };
    runtime()?.block_on(watch(request))
}
