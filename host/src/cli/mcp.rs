//! `vx mcp`: the Model Context Protocol server for coding agents, on
//! stdin and stdout (docs/agents.md).

use std::path::Path;

use clap::Args;

use crate::cache::state_dir;
use crate::config::load_workspace;
use crate::error::Result;

/// Serve this workspace to coding agents over MCP (stdio): tasks, plans, logs.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  vx mcp                  read-only: projects, tasks, keys, affected, plans, runs, failed logs
  vx mcp --allow-run      also the run_tasks tool, which runs `vx run`
In Claude Code: claude mcp add vx -- vx mcp
Standard input and output carry the protocol; messages go to standard error.")]
pub(crate) struct McpArgs {
    /// Offer the `run_tasks` tool, which runs tasks (`vx run`) for the client.
    #[arg(long)]
    pub allow_run: bool,
}

pub(crate) fn cmd_mcp(args: McpArgs, cwd: &Path) -> Result<u8> {
    // Loaded once here so that a directory outside any workspace, or a
    // broken vx.toml, is one line before the client waits on a server
    // that cannot answer; each tool loads the workspace afresh.
    let ws = load_workspace(cwd)?;
    let runtime = super::exec_args::runtime()?;
    runtime.block_on(crate::mcp::serve(ws.root.clone(), state_dir(&ws), args.allow_run))?;
    // Child vx processes that a cancelled request left stopping are
    // reaped by the runtime; none outlives this process (`VX_PARENT_DEATH`).
    drop(runtime);
    Ok(0)
}
