//! The settings of one run, already validated by the CLI.

use std::time::Duration;

use crate::config::EnvMode;
use crate::graph::ContinueMode;
use crate::report::{LogOrder, OutputLogs};

#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    /// `--concurrency`: the cpus tasks may hold at once (at least 1; a task
    /// without `resources` holds one).
    pub concurrency: usize,
    /// `--memory`: the bytes of declared `resources.memory` running at
    /// once; `None` counts none.
    pub memory: Option<u64>,
    pub continue_mode: ContinueMode,
    pub output_logs: OutputLogs,
    pub log_order: LogOrder,
    pub log_prefix: crate::report::LogPrefix,
    /// `--timeout`: applies to tasks that set no `timeout` of their own.
    pub timeout: Option<Duration>,
    pub color: bool,
    /// Running under GitHub Actions: grouped logs and annotations.
    pub github: bool,
    /// `--executor NAME`: where every task that is not persistent runs
    /// (`local`, `remote`, or an executor plugin), over each task's own.
    pub executor: Option<String>,
    /// `--env-mode`, over `[workspace] env-mode` (applied to the workspace
    /// once it is loaded, with `Workspace::override_env_mode`).
    pub env_mode: Option<EnvMode>,
    /// `--retries N`: attempts after a failed one, for every task that ends
    /// (over each task's own `retries`).
    pub retries: Option<u32>,
    /// `--verify=inputs`: every task on the local executor is traced, not
    /// confined, and what it touches outside its declarations lands here.
    pub observe: Option<std::sync::Arc<crate::sandbox::Observed>>,
    /// `--download`: which remote hits have their outputs fetched.
    pub download: super::Download,
    /// The front end's requests (the terminal UI's): typing into
    /// interactive tasks, restarting servers. `None` when nothing asks.
    pub controls: Option<std::sync::Arc<super::Controls>>,
}

impl RunOptions {
    /// The budgets admission shares between tasks.
    pub(crate) fn budget(&self) -> super::Budget {
        super::Budget { millicpus: self.concurrency.max(1) as u64 * 1000, memory: self.memory }
    }
}
