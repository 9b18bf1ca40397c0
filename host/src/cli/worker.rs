//! `vx worker`: joins a REAPI farm (BuildGrid's Remote Workers API) and
//! runs the actions it is leased, under the guard, until SIGINT or SIGTERM.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::config::RemoteSettings;
use crate::error::{Error, Result};
use crate::guard::Groups;
use crate::worker::{WorkerOptions, run_worker};

/// Run actions for a REAPI server (BuildGrid) as one of its bots.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  vx worker --endpoint grpc://127.0.0.1:50051
  vx worker --endpoint grpc://farm:50051 --concurrency 4 --platform OSFamily=linux
The worker runs each action in a fresh directory under --work-dir, in its own
process group, and stops everything it started on SIGINT or SIGTERM.")]
pub(crate) struct WorkerArgs {
    /// The server: `grpc://HOST:PORT`, or `grpcs://` for TLS.
    #[arg(long, value_name = "URL")]
    pub endpoint: String,

    /// The REAPI instance name (default: the empty name).
    #[arg(long, value_name = "NAME", default_value = "")]
    pub instance_name: String,

    /// Actions at once (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,

    /// A platform property this worker offers, `KEY=VALUE`; repeatable.
    /// Default: `OSFamily=linux` and this machine's `ISA`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub platform: Vec<String>,

    /// The variable holding a bearer token for the server.
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,

    /// A PEM file of CA certificates to trust for a `grpcs://` endpoint.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,

    /// Where actions' input roots are made (default: a directory under the
    /// system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,

    /// The bot's id (default: host name and process id).
    #[arg(long, value_name = "ID")]
    pub bot_id: Option<String>,
}

pub(crate) fn cmd_worker(args: WorkerArgs) -> Result<u8> {
    let usage = |m: String| Error::usage(m).with_hint("see `vx worker --help`");
    if crate::config::grpc_address(&args.endpoint).is_none() {
        return Err(usage(format!(
            "--endpoint `{}` is not a gRPC address; write it like grpc://127.0.0.1:50051",
            args.endpoint
        )));
    }
    let concurrency = args.concurrency.unwrap_or_else(crate::sys::cores);
    if concurrency == 0 {
        return Err(usage("--concurrency must be at least 1".into()));
    }
    let mut platform = BTreeMap::new();
    if args.platform.is_empty() {
        platform.insert("OSFamily".to_string(), "linux".to_string());
        platform.insert("ISA".to_string(), std::env::consts::ARCH.replace('_', "-"));
    }
    for p in &args.platform {
        let (k, v) = p
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| usage(format!("--platform `{p}` is not KEY=VALUE")))?;
        platform.insert(k.to_string(), v.to_string());
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_else(|_| "host".into());
    let bot_id = args.bot_id.unwrap_or_else(|| format!("vx-{}-{}", host.trim(), std::process::id()));
    // Only a directory vx made up is removed at exit; a --work-dir the user
    // named is theirs (each lease's own directory inside it is removed).
    let own_dir = args.work_dir.is_none();
    let work_dir =
        args.work_dir.unwrap_or_else(|| std::env::temp_dir().join(format!("vx-worker-{}", std::process::id())));
    std::fs::create_dir_all(&work_dir).map_err(|e| Error::io(format_args!("create {}", work_dir.display()), e))?;
    let opts = WorkerOptions {
        remote: RemoteSettings {
            endpoint: args.endpoint,
            instance_name: args.instance_name,
            token_env: args.token_env,
            tls_ca: args.tls_ca,
            headers: BTreeMap::new(),
            timeout: Duration::from_secs(60),
            platform: BTreeMap::new(),
        },
        concurrency,
        platform,
        bot_id: bot_id.clone(),
        work_dir: work_dir.clone(),
    };
    let runtime = super::exec_args::runtime()?;
    let groups = Groups::with_guard(&format!("worker-{bot_id}"));
    let outcome = runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt()).map_err(|e| Error::io("install signal handlers", e))?;
        let mut term = signal(SignalKind::terminate()).map_err(|e| Error::io("install signal handlers", e))?;
        // The exit a shell reports for the signal, as any Unix tool
        // stopped by it (a supervisor can tell a stop from a failure).
        let stop = async move {
            tokio::select! {
                _ = int.recv() => 130,
                _ = term.recv() => 143,
            }
        };
        run_worker(opts, groups.clone(), stop).await.map_err(Error::from)
    });
    groups.close_guard();
    if own_dir {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    outcome
}
