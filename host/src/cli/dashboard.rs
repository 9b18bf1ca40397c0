//! `vx dashboard`: serves the dashboard of the workspace's history on
//! 127.0.0.1 until Ctrl-C or SIGTERM (exit 0), with `.vx/dashboard.json`
//! written while it is up so that runs started meanwhile show live.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use clap::Args;

use crate::cache::{LocalStore, state_dir};
use crate::config::load_workspace;
use crate::dashboard::{App, bind, serve, write_marker};
use crate::error::{Error, Result};
use crate::history::History;

/// Serve a local web page over the run history: runs, timelines, tasks, stats.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  vx dashboard                 on http://127.0.0.1:7878/
  vx dashboard --port 0        on any free port (the URL is printed)
The page is served on 127.0.0.1 only, from assets inside vx: it works
offline. Runs started while it is up show live. Ctrl-C stops it.")]
pub(crate) struct DashboardArgs {
    /// The port on 127.0.0.1; 0 picks a free one.
    #[arg(long, value_name = "N", default_value_t = 7878)]
    pub port: u16,
}

pub(crate) fn cmd_dashboard(args: DashboardArgs, cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    let state = state_dir(&ws);
    let history = History::open(&state.join("history.db"))
        .map_err(|e| Error::internal(format!("could not open .vx/history.db: {e}")))?;
    let descriptions = ws
        .projects
        .iter()
        .flat_map(|p| p.tasks.values().filter_map(|t| Some((format!("{}#{}", p.name, t.name), t.description.clone()?))))
        .collect();
    let app = App::new(history, state.clone(), LocalStore::new(ws.cache.dir.clone())).describing(descriptions);
    let app = Arc::new(app);
    let runtime = super::exec_args::runtime()?;
    runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let listener = bind(args.port).await.map_err(|e| {
            Error::usage(format!("could not listen on 127.0.0.1:{}: {e}", args.port))
                .with_hint("pick another port with --port N, or --port 0 for any free one")
        })?;
        let port = listener.local_addr().map_err(|e| Error::io("read the listening address", e))?.port();
        let mut int = signal(SignalKind::interrupt()).map_err(|e| Error::io("install signal handlers", e))?;
        let mut term = signal(SignalKind::terminate()).map_err(|e| Error::io("install signal handlers", e))?;
        let _marker = write_marker(&state, port).map_err(|e| Error::io("write .vx/dashboard.json", e))?;
        let mut out = std::io::stdout().lock();
        // Scripts and tests read the port from this line.
        let _ = writeln!(out, "vx dashboard: http://127.0.0.1:{port}/");
        let _ = out.flush();
        drop(out);
        let stop = async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        };
        serve(listener, app, stop).await;
        Ok(0)
    })
}
