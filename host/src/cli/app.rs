//! The top of the command line: vx's clap definition (global flags and
//! the subcommands), the binary's entry point, and `-C`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use super::{
    args, cache_cmd, completions, dashboard, history, info, init, last, lock, mcp, pipe, plugin_cmd, plugin_verb,
    prune, query, run, show, translate, upgrade, watch, why, worker,
};
use crate::error::{Error, Result};

const AFTER_HELP: &str = "Examples:
  vx run build                 every project's build, in dependency order
  vx run web#build             one task and what it depends on
  vx run test --filter ...ui   ui and every project that depends on it
  vx show --format json        projects, tasks and dependencies";

/// vx runs the tasks of a monorepo in dependency order.
#[derive(Debug, Parser)]
#[command(name = "vx", version, about, after_help = AFTER_HELP, propagate_version = true)]
pub(super) struct Cli {
    /// Run as if vx was started in DIR (like `git -C`).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    Run(Box<run::RunArgs>),
    Watch(Box<watch::WatchArgs>),
    Show(show::ShowArgs),
    Query(query::QueryArgs),
    Last(last::LastArgs),
    Lock(lock::LockArgs),
    History(history::HistoryArgs),
    Dashboard(dashboard::DashboardArgs),
    Mcp(mcp::McpArgs),
    Why(why::WhyArgs),
    Cache(cache_cmd::CacheArgs),
    Info(info::InfoArgs),
    Init(init::InitArgs),
    Upgrade(upgrade::UpgradeArgs),
    Completions(completions::CompletionsArgs),
    Plugin(plugin_cmd::PluginArgs),
    Worker(worker::WorkerArgs),
    Prune(prune::PruneArgs),
    /// The guard process vx starts for itself (internal).
    #[command(name = "__guard", hide = true)]
    Guard {
        run_id: String,
    },
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    pipe::install();
    // `COMPLETE=SHELL vx …` is the shell asking for completions: answer and exit.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    // Warnings from the cache, remote, guard and plugin code reach stderr
    // (or, during a run, the run's event stream) through one path.
    crate::events::bridge::install(std::sync::Arc::new(crate::report::Stderr));
    let argv: Vec<OsString> = std::env::args_os().collect();
    match run_cli(argv) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("vx: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run_cli(argv: Vec<OsString>) -> Result<u8> {
    let argv = match argv.iter().map(|a| a.to_str().map(str::to_string)).collect::<Option<Vec<String>>>() {
        Some(args) => translate::translate(args)?.into_iter().map(OsString::from).collect(),
        // Non-UTF-8 arguments are no habit of turbo or nx: pass them on as they are.
        None => argv,
    };
    if let Some(result) = plugin_verb::dispatch(&argv) {
        return result;
    }
    let mut command = Cli::command();
    let plugin_help = plugin_verb::help_section(&argv);
    if !plugin_help.is_empty() {
        command = command.after_help(format!("{AFTER_HELP}{plugin_help}"));
    }
    args::check_value_flags(&command, &argv)?;
    let matches = match command.try_get_matches_from_mut(&argv) {
        Ok(m) => m,
        Err(e) => return args::clap_error(e),
    };
    let cli = Cli::from_arg_matches(&matches).map_err(|e| Error::usage(e.to_string()))?;
    let cwd = working_dir(cli.dir)?;
    // The arguments as typed, for history (`vx last` prints them back).
    let user_args: Vec<String> = argv.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    match cli.command {
        Commands::Run(a) => run::cmd_run(*a, &cwd, &user_args),
        Commands::Watch(a) => watch::cmd_watch(*a, &cwd, &user_args),
        Commands::Show(a) => show::cmd_show(a, &cwd),
        Commands::Query(a) => query::cmd_query(a, &cwd),
        Commands::Last(a) => last::cmd_last(a, &cwd),
        Commands::Lock(a) => lock::cmd_lock(a, &cwd),
        Commands::History(a) => history::cmd_history(a, &cwd),
        Commands::Why(a) => why::cmd_why(a, &cwd),
        Commands::Cache(a) => cache_cmd::cmd_cache(a, &cwd),
        Commands::Info(a) => info::cmd_info(a, &cwd),
        Commands::Init(a) => init::cmd_init(a, &cwd),
        Commands::Upgrade(a) => upgrade::cmd_upgrade(a),
        Commands::Completions(a) => completions::cmd_completions(a),
        Commands::Plugin(a) => plugin_cmd::cmd_plugin(a, &cwd),
        Commands::Worker(a) => worker::cmd_worker(a),
        Commands::Dashboard(a) => dashboard::cmd_dashboard(a, &cwd),
        Commands::Mcp(a) => mcp::cmd_mcp(a, &cwd),
        Commands::Prune(a) => prune::cmd_prune(a, &cwd),
        Commands::Guard { run_id } => Ok(crate::guard::guard_main(&run_id)),
    }
}

pub(super) fn working_dir(dir: Option<PathBuf>) -> Result<PathBuf> {
    let base = std::env::current_dir().map_err(|e| Error::io("read the current directory", e))?;
    let dir = match dir {
        Some(d) => base.join(d),
        None => base,
    };
    dir.canonicalize()
        .map_err(|e| Error::usage(format!("-C {}: {e}", dir.display())).with_hint("give -C an existing directory"))
}
