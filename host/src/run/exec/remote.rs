//! Tasks with `executor = "remote"` (or a run with `--executor remote`):
//! the task runs on the `[remote]` REAPI server's workers. Its input root
//! is what it declares — its inputs, the global inputs and the outputs of
//! the tasks it depends on — so a remote task must declare everything it
//! reads, as Bazel's actions do. Its log is shown when it ends; its outputs
//! land in the project and feed the cache and history like a local run's.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::{Attempt, Executor, Ran};
use crate::cache::Cache;
use crate::config::{Project, RemoteSettings, Task, Workspace};
use crate::events::{Event, TaskStatus};
use crate::inputs::{GlobFilter, list_files};
use crate::remote::exec::{ExecError, Executed, RemoteSpec, output_paths};
use crate::remote::{Reapi, RemoteError, runtime};

/// The executor name that means the `[remote]` server.
pub(crate) const REMOTE_EXECUTOR: &str = crate::config::REMOTE;
/// How often a running task checks whether vx was interrupted.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// Time the server gets beyond the task's timeout before vx gives up on it.
const TIMEOUT_SLACK: Duration = Duration::from_secs(30);

/// The connection for remote execution, made on first use.
#[derive(Debug, Default)]
pub(crate) struct RemoteConnection {
    settings: Option<RemoteSettings>,
    client: OnceLock<Result<Reapi, String>>,
}

/// What a task needs to run remotely, besides its command.
#[derive(Debug, Clone)]
pub(crate) struct RemoteJob {
    pub client: Reapi,
    pub cache: Arc<Cache>,
    pub root: PathBuf,
    pub project_dir: PathBuf,
    pub task: Task,
    pub env: Vec<(String, String)>,
    /// `(project dir, output globs)` of each task this one depends on.
    pub dep_outputs: Vec<(PathBuf, Vec<String>)>,
}

/// Remote execution's part of a task's key: where it runs matters only
/// through the instance and the platform.
pub(crate) fn identity(instance: &str, platform: &std::collections::BTreeMap<String, String>) -> String {
    let platform: Vec<String> = platform.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("remote:{instance}:{}", platform.join(","))
}

impl RemoteConnection {
    pub(crate) fn new(ws: &Workspace) -> RemoteConnection {
        RemoteConnection { settings: ws.remote.clone(), client: OnceLock::new() }
    }

    /// [`identity`] from `[remote]`, without connecting (the client takes
    /// its instance and platform from the same settings).
    pub(crate) fn identity(&self) -> Result<String, String> {
        let settings = self.settings.as_ref().ok_or_else(|| {
            "executor `remote` needs a [remote] table in the root vx.toml (endpoint = \"grpc://HOST:PORT\"); see docs/remote.md".to_string()
        })?;
        Ok(identity(&settings.instance_name, &settings.platform))
    }

    fn client(&self) -> Result<Reapi, String> {
        self.client
            .get_or_init(|| {
                let settings = self.settings.clone().ok_or_else(|| {
                    "executor `remote` needs a [remote] table in the root vx.toml (endpoint = \"grpc://HOST:PORT\"); see docs/remote.md".to_string()
                })?;
                let client = Reapi::block(async move { Reapi::connect(&settings).await }).map_err(|e| e.to_string())?;
                if !client.caps.exec {
                    return Err(format!(
                        "the REAPI server at {} does not offer remote execution (its capabilities say exec_enabled = false)",
                        client.endpoint
                    ));
                }
                Ok(client)
            })
            .clone()
    }

    /// The remote job of `task`; an error says why it cannot run remotely.
    pub(crate) fn prepare(
        &self,
        project: &Project,
        task: &Task,
        cache: Option<&Arc<Cache>>,
        root: &std::path::Path,
        dep_outputs: Vec<(PathBuf, Vec<String>)>,
        env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    ) -> Result<RemoteJob, String> {
        if task.persistent {
            return Err("a persistent task cannot run through executor `remote`; vx keeps servers local".into());
        }
        if crate::inputs::OutputGlobs::split(&task.outputs).has_anchored() {
            // REAPI names outputs relative to the action's working directory
            // (the project), and `..` is not a path it allows.
            return Err("a task with root-anchored outputs (`/…`) cannot run through executor `remote`; \
                        write its outputs inside its project"
                .into());
        }
        output_paths(&task.outputs).map_err(|e| e.to_string())?;
        let cache = cache.cloned().ok_or("remote execution needs the workspace's cache to list inputs")?;
        let client = self.client()?;
        let env = env.into_iter().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
        Ok(RemoteJob {
            client,
            cache,
            root: root.to_path_buf(),
            project_dir: project.dir.clone(),
            task: task.clone(),
            env,
            dep_outputs,
        })
    }
}

impl RemoteJob {
    /// The input files: the task's own, the global inputs, and the outputs
    /// of its dependencies (all workspace-relative).
    fn inputs(&self) -> Result<Vec<(String, PathBuf)>, String> {
        let mut files =
            self.cache.inputs.files(&self.root, &self.project_dir, &self.task).map_err(|e| e.to_string())?;
        files.extend(self.cache.inputs.global_files().into_iter().map(|rel| {
            let abs = self.root.join(&rel);
            (rel, abs)
        }));
        for (dir, globs) in &self.dep_outputs {
            let filter = GlobFilter::new(Some(globs), &[]).map_err(|e| e.to_string())?;
            let prefix = dir.strip_prefix(&self.root).unwrap_or(dir).to_string_lossy().into_owned();
            files.extend(list_files(dir, &filter, crate::inputs::Listing::Outputs, &[]).into_iter().map(|f| {
                let rel = if prefix.is_empty() { f.rel } else { format!("{prefix}/{}", f.rel) };
                (rel, f.abs)
            }));
        }
        files.sort();
        files.dedup_by(|a, b| a.0 == b.0);
        Ok(files)
    }
}

impl Executor for RemoteJob {
    /// Runs the task on the REAPI server; its log is shown when it ends.
    async fn run(&self, a: &Attempt) -> Ran {
        a.events.emit(Event::Started { task: &a.id, key: a.key.as_deref(), executor: REMOTE_EXECUTOR });
        let failed = |why: String| {
            a.events.note(&a.id, &why);
            Ran::failed(why)
        };
        let inputs = {
            let job = self.clone();
            match tokio::task::spawn_blocking(move || job.inputs()).await {
                Ok(Ok(files)) => files,
                Ok(Err(why)) => return failed(format!("could not list its inputs: {why}")),
                Err(e) => return failed(format!("could not list its inputs: {e}")),
            }
        };
        let (joined, timed_out) = self.call(a, self.spec(a, inputs)).await;
        let timeout = a.timeout.unwrap_or_default();
        let stopped = |status| Ran { status, log: Vec::new(), exit_code: None, usage: None };
        match joined {
            _ if timed_out => stopped(TaskStatus::TimedOut(timeout)),
            _ if a.cancelled.load(Ordering::SeqCst) => stopped(TaskStatus::Cancelled),
            Ok(Ok(done)) => finished(a, done),
            Ok(Err(ExecError::TimedOut)) => {
                a.events.note(&a.id, "the remote worker stopped it at its timeout");
                stopped(TaskStatus::TimedOut(timeout))
            }
            Ok(Err(ExecError::Setup(why))) => failed(why),
            Ok(Err(ExecError::Remote(e))) => failed(remote_failure(&e)),
            Err(e) => failed(format!("the remote call crashed: {e}")),
        }
    }

    fn identity(&self) -> String {
        identity(&self.client.instance, &self.client.platform)
    }
}

impl RemoteJob {
    /// The action: the command, its environment and its input files.
    fn spec(&self, a: &Attempt, inputs: Vec<(String, PathBuf)>) -> RemoteSpec {
        let working_dir =
            self.project_dir.strip_prefix(&self.root).unwrap_or(&self.project_dir).to_string_lossy().into_owned();
        let mut env = self.env.clone();
        env.push(("VX_PROJECT".into(), a.mark.project.clone()));
        env.push(("VX_TASK".into(), a.mark.task.clone()));
        RemoteSpec {
            argv: std::iter::once(&a.command.program)
                .chain(&a.command.args)
                .map(|s| s.to_string_lossy().into_owned())
                .collect(),
            env,
            working_dir,
            output_paths: output_paths(&self.task.outputs).unwrap_or_default(),
            inputs,
            timeout: a.timeout,
            platform: self.client.platform.clone(),
            skip_cache_lookup: self.cache.force,
        }
    }

    /// Executes `spec` on the remote runtime; cancels the operation on the
    /// timeout (plus the server's slack) or Ctrl-C. Returns the call's
    /// result and whether vx gave up on it at the timeout.
    async fn call(
        &self,
        a: &Attempt,
        spec: RemoteSpec,
    ) -> (Result<Result<Executed, ExecError>, tokio::task::JoinError>, bool) {
        let (cancel_tx, cancel_rx) = tokio::sync::oneshot::channel::<()>();
        let (client, root) = (self.client.clone(), self.root.clone());
        let call = runtime().spawn(async move {
            client
                .execute_task(spec, root, async move {
                    let _ = cancel_rx.await;
                })
                .await
        });
        tokio::pin!(call);
        let far = Duration::from_secs(u64::MAX / 4);
        let deadline = tokio::time::sleep(a.timeout.map_or(far, |t| t + TIMEOUT_SLACK));
        tokio::pin!(deadline);
        let mut poll = tokio::time::interval(CANCEL_POLL);
        let mut cancel_tx = Some(cancel_tx);
        let mut timed_out = false;
        let joined = loop {
            tokio::select! {
                joined = &mut call => break joined,
                () = &mut deadline, if !timed_out => {
                    timed_out = true;
                    a.events.note(&a.id, "timed out; cancelling the remote operation");
                    if let Some(tx) = cancel_tx.take() { let _ = tx.send(()); }
                }
                _ = poll.tick(), if cancel_tx.is_some() => {
                    if a.cancelled.load(Ordering::SeqCst) && let Some(tx) = cancel_tx.take() {
                        let _ = tx.send(());
                    }
                }
            }
        };
        (joined, timed_out)
    }
}

/// A finished remote action: its log as output lines, then its status.
fn finished(a: &Attempt, done: Executed) -> Ran {
    for piece in crate::events::output::pieces(&done.log) {
        a.events.output(&a.id, piece);
    }
    if done.cached {
        a.events.note(&a.id, "the REAPI server answered from its action cache");
    }
    // Kept as a local task's log is: bounded (events::output).
    let mut log = crate::events::output::BoundedLog::default();
    log.push(&done.log);
    let log = log.finish();
    if done.exit_code == 0 {
        Ran { status: TaskStatus::Succeeded, log, exit_code: Some(0), usage: None }
    } else {
        Ran {
            status: TaskStatus::Failed(format!("exit code {}", done.exit_code)),
            log,
            exit_code: Some(done.exit_code),
            usage: None,
        }
    }
}

fn remote_failure(e: &RemoteError) -> String {
    match e {
        RemoteError::Unavailable(m) => format!("the REAPI server is unavailable: {m}"),
        RemoteError::Refused(m) | RemoteError::Invalid(m) | RemoteError::Blob(m) => m.clone(),
    }
}
