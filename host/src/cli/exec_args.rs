//! The flags `vx run` and `vx watch` share — selection, concurrency,
//! failure mode, cache access, timeouts, logs, env mode — and turning them into a
//! validated selection and run options.

use std::path::{Path, PathBuf};

use clap::Args;
use clap_complete::ArgValueCompleter;

use super::args::{parse_concurrency, parse_memory};
use super::choice::choice;
use super::completions::{complete_projects, complete_tasks};
use crate::cache::{Cache, CacheMode};
use crate::config::duration::parse_duration;
use crate::config::{EnvMode, Workspace};
use crate::error::{Error, Result};
use crate::graph::{ContinueMode, Filter};
use crate::plan::Selection;
use crate::report::{LogOrder, LogPrefix, OutputLogs, color_enabled, github_actions};
use crate::run::{Download, RunOptions};

/// The selection flags `vx run`, `vx watch` and `vx query` share.
#[derive(Debug, Clone, Args)]
pub(crate) struct SelectionArgs {
    /// Tasks to run: `build` (in every selected project) or `web#build`.
    #[arg(value_name = "TASK", add = ArgValueCompleter::new(complete_tasks))]
    pub tasks: Vec<String>,

    /// Arguments after `--`, appended (shell-quoted) to the command of each
    /// named task, not to its dependencies: `vx run test -- --coverage`.
    /// Refused for a name that reaches only groups (no command).
    #[arg(last = true, value_name = "ARGS")]
    pub pass_through: Vec<String>,

    /// Select projects: `name`, `@org/*`, `./apps/*`, `name...` (with its
    /// dependencies), `...name` (with its dependents), `[REV]` (changed since
    /// REV), `tag:GLOB` (tagged projects), `//` (the root), `!name`
    /// (exclude). Repeatable; the union is taken.
    #[arg(long, short = 'F', value_name = "FILTER", add = ArgValueCompleter::new(complete_projects))]
    pub filter: Vec<String>,

    /// Only the named tasks that files changed against REV affect (default:
    /// the merge base with main, else master), including uncommitted and
    /// untracked files, plus the tasks that depend on them.
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub affected: Option<String>,

    /// Every project, even when run inside a project directory.
    #[arg(long)]
    pub all: bool,

    /// Run only the named tasks, not the tasks they depend on (order among
    /// the named ones still holds).
    #[arg(long, visible_alias = "exclude-dependencies")]
    pub only: bool,
}

impl SelectionArgs {
    /// The selection, its filters parsed (a bad one is a usage error).
    pub(crate) fn selection(self, cwd: &Path) -> Result<Selection> {
        let filters = self.filter.iter().map(|f| Filter::parse(f)).collect::<Result<Vec<_>>>()?;
        Ok(Selection {
            tasks: self.tasks,
            filters,
            affected: self.affected.map(|a| if a.is_empty() { None } else { Some(a) }),
            all: self.all,
            cwd: cwd.to_path_buf(),
            only: self.only,
            pass_through: self.pass_through,
            shard: None,
        })
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ExecArgs {
    #[command(flatten)]
    pub select: SelectionArgs,

    /// The cpus tasks may hold at once: a positive integer or a share of
    /// the cores (`50%`). A task holds one, or its `resources.cpus`.
    /// Default: the number of cores.
    #[arg(long, value_name = "N|P%")]
    pub concurrency: Option<String>,

    /// The memory tasks may hold at once, counted from their
    /// `resources.memory`: a size (`8GiB`), a share of the machine's
    /// memory (`50%`) or `unlimited`. Default: the machine's memory.
    #[arg(long, value_name = "SIZE|P%")]
    pub memory: Option<String>,

    /// After a failure: `never` (default: stop starting tasks), `dependents-ok`
    /// (keep running what does not depend on the failure; Turborepo's
    /// `dependencies-successful` is accepted too), `always` (run everything;
    /// the bare flag means this).
    #[arg(
        long = "continue",
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "always",
        value_parser = choice::<ContinueMode>()
    )]
    pub continue_mode: Option<ContinueMode>,

    /// Ignore cached results (results are still written).
    #[arg(long)]
    pub force: bool,

    /// Cache access per tier: `local:rw,remote:r`, `local:r`, or `off`.
    #[arg(long, value_name = "SPEC")]
    pub cache: Option<String>,

    /// Which remote cache hits have their outputs fetched: `needed` (default:
    /// the named tasks', and what a task that runs needs), `all`, or `none`
    /// (only what a task that runs needs).
    #[arg(long, value_name = "MODE", default_value = "needed", value_parser = choice::<Download>())]
    pub download: Download,

    /// The local cache directory (default `[cache] dir`, else `.vx/cache`).
    #[arg(long, value_name = "PATH", env = "VX_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Stop any task running longer than DUR (`90s`, `10m`), unless it sets its own `timeout`.
    #[arg(long, value_name = "DUR")]
    pub timeout: Option<String>,

    /// Which logs to show: full, new-only, errors-only, hash-only, none.
    #[arg(long, value_name = "MODE", default_value = "full", value_parser = choice::<OutputLogs>())]
    pub output_logs: OutputLogs,

    /// Run every task that is not persistent on this executor: `local`,
    /// `remote` (the [remote] REAPI server) or an executor plugin's name.
    #[arg(long, value_name = "NAME")]
    pub executor: Option<String>,

    /// Which variables tasks see: `strict` (the allowlist and what `env` and
    /// `pass-env` name) or `loose` (everything). Default: `[workspace] env-mode`, else strict.
    #[arg(long, value_name = "MODE", value_parser = choice::<EnvMode>())]
    pub env_mode: Option<EnvMode>,

    /// Run a failed task again, up to N more times, over each task's own
    /// `retries` (`--retries 0` turns retries off).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,

    /// `stream` lines as they come (default; Turborepo's `auto` is taken
    /// too) or `grouped` per task when it ends.
    #[arg(long, value_name = "ORDER", default_value = "stream", value_parser = choice::<LogOrder>())]
    pub log_order: LogOrder,

    /// `task` (default; `auto` is the same): each line of a task's output
    /// starts with `project#task:`; `none`: as the task printed it.
    #[arg(long, value_name = "PREFIX", default_value = "auto", value_parser = choice::<LogPrefix>())]
    pub log_prefix: LogPrefix,
}

/// Validated flags, before the workspace is read.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub selection: Selection,
    pub opts: RunOptions,
    pub cache_mode: CacheMode,
    pub cache_dir: Option<PathBuf>,
    pub force: bool,
}

impl Prepared {
    pub(crate) fn open_cache(&self, ws: &Workspace) -> Result<Cache> {
        Cache::open(ws, self.cache_dir.clone(), self.cache_mode, self.force, crate::backends::remote(ws))
    }
}

impl ExecArgs {
    /// Checks every flag (all usage errors come before any work).
    pub(crate) fn prepare(self, cwd: &Path, command: &str) -> Result<Prepared> {
        let concurrency = match &self.concurrency {
            Some(c) => parse_concurrency(c, command)?,
            None => crate::sys::cores(),
        };
        let memory = match &self.memory {
            Some(m) => parse_memory(m, command)?,
            None => crate::sys::physical_memory(),
        };
        let timeout = self
            .timeout
            .as_deref()
            .map(|t| {
                parse_duration(t).map_err(|m| {
                    Error::usage(format!("--timeout: {m}")).with_hint(format!("see `vx {command} --help`"))
                })
            })
            .transpose()?;
        let opts = RunOptions {
            concurrency,
            memory,
            continue_mode: self.continue_mode.unwrap_or_default(),
            output_logs: self.output_logs,
            log_order: self.log_order,
            log_prefix: self.log_prefix,
            timeout,
            color: color_enabled(),
            github: github_actions(),
            executor: self.executor,
            env_mode: self.env_mode,
            retries: self.retries,
            observe: None,
            controls: None,
            download: self.download,
        };
        let selection = self.select.selection(cwd)?;
        let cache_mode = self.cache.as_deref().map(CacheMode::parse).transpose()?.unwrap_or_default();
        Ok(Prepared { selection, opts, cache_mode, cache_dir: self.cache_dir.map(|d| cwd.join(d)), force: self.force })
    }
}

/// The async runtime for running tasks: one thread drives processes and
/// output; hashing and archives go to a blocking pool sized to the cores.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    let cores = crate::sys::cores();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(cores * 2)
        .build()
        .map_err(|e| Error::io("start the async runtime", e))
}
