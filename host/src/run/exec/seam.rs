//! The seam itself: an [`Attempt`] in, what [`Ran`] out, the
//! [`Executor`] trait every executor implements, and [`Chosen`], the one
//! enum that names them all.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::readiness::Persistence;
#[cfg(test)]
use super::scripted;
use super::{local, plugin, remote};
use crate::events::{Bus, TaskStatus};
use crate::guard::{Groups, TaskCommand, TaskMark, Usage};

/// One attempt at running a task's command, with everything an executor
/// needs.
#[derive(Debug)]
pub(crate) struct Attempt {
    /// `project#task`.
    pub id: String,
    pub command: TaskCommand,
    /// The sandbox the command runs in (its hook is `command.confine`):
    /// the tracer of each attempt and the report of refused paths read it.
    pub confinement: Option<Arc<crate::sandbox::Confinement>>,
    pub mark: TaskMark,
    pub timeout: Option<Duration>,
    /// Set for a persistent task (a server).
    pub persistent: Option<Persistence>,
    /// The task's node in the graph (readiness is reported by node).
    pub node: usize,
    pub groups: Groups,
    pub events: Bus,
    /// Set when vx was interrupted.
    pub cancelled: Arc<AtomicBool>,
    /// Keep the output (for the cache and the report's log tail).
    pub keep_log: bool,
    /// The task's key, when it has one (shown by `--output-logs hash-only`).
    pub key: Option<String>,
    /// Where an interactive task's terminal is offered for input.
    pub controls: Option<Arc<crate::run::Controls>>,
}

/// What an executor reports back.
#[derive(Debug)]
pub(crate) struct Ran {
    pub status: TaskStatus,
    /// The output as written, when the attempt kept it.
    pub log: Vec<u8>,
    /// The exit code of the task's main process, when it ran and exited.
    pub exit_code: Option<i32>,
    /// What its process tree used, when the executor can tell (local
    /// processes; a plugin or a remote worker reports none).
    pub usage: Option<Usage>,
}

impl Ran {
    pub(crate) fn failed(why: String) -> Ran {
        Ran { status: TaskStatus::Failed(why), log: Vec::new(), exit_code: None, usage: None }
    }
}

/// Why a task cannot run on the executor it was given; the task fails
/// with this message before it starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub String);

/// Something that runs a task's command.
pub(crate) trait Executor {
    /// Runs the attempt to its end: the command has exited (or was
    /// stopped) and nothing it started is left.
    fn run(&self, attempt: &Attempt) -> impl std::future::Future<Output = Ran> + Send;

    /// What goes into the task's key for this executor (empty for local).
    fn identity(&self) -> String;
}

/// The executor a task was given.
#[derive(Debug)]
pub(crate) enum Chosen {
    Local(local::Local),
    Plugin(plugin::PluginExecutor),
    Remote(Box<remote::RemoteJob>),
    #[cfg(test)]
    Scripted(scripted::Scripted),
}

impl Executor for Chosen {
    async fn run(&self, attempt: &Attempt) -> Ran {
        match self {
            Chosen::Local(e) => e.run(attempt).await,
            Chosen::Plugin(e) => e.run(attempt).await,
            Chosen::Remote(e) => e.run(attempt).await,
            #[cfg(test)]
            Chosen::Scripted(e) => e.run(attempt).await,
        }
    }

    fn identity(&self) -> String {
        match self {
            Chosen::Local(e) => e.identity(),
            Chosen::Plugin(e) => e.identity(),
            Chosen::Remote(e) => e.identity(),
            #[cfg(test)]
            Chosen::Scripted(e) => e.identity(),
        }
    }
}
