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

use super::job::Job;
use crate::cache::{Cache, GlobFilter, list_files};
use crate::config::{Project, RemoteSettings, Task, Workspace};
use crate::events::TaskStatus;
use crate::remote::exec::{ExecError, RemoteSpec, output_paths};
use crate::remote::{Reapi, RemoteError, runtime};

/// The executor name that means the `[remote]` server.
pub const REMOTE_EXECUTOR: &str = "remote";
/// How often a running task checks whether vx was interrupted.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// Time the server gets beyond the task's timeout before vx gives up on it.
const TIMEOUT_SLACK: Duration = Duration::from_secs(30);

/// The connection for remote execution, made on first use.
#[derive(Debug, Default)]
pub struct RemoteExecutor {
    settings: Option<RemoteSettings>,
    client: OnceLock<Result<Reapi, String>>,
}

/// What a task needs to run remotely, besides its command.
#[derive(Debug, Clone)]
pub struct RemoteJob {
    pub client: Reapi,
    pub cache: Arc<Cache>,
    pub root: PathBuf,
    pub project_dir: PathBuf,
    pub task: Task,
    pub env: Vec<(String, String)>,
    /// `(project dir, output globs)` of each task this one depends on.
    pub dep_outputs: Vec<(PathBuf, Vec<String>)>,
}

impl RemoteExecutor {
    pub fn new(ws: &Workspace) -> RemoteExecutor {
        RemoteExecutor { settings: ws.remote.clone(), client: OnceLock::new() }
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
    pub fn prepare(
        &self,
        project: &Project,
        task: &Task,
        cache: Option<&Arc<Cache>>,
        root: &std::path::Path,
        dep_outputs: Vec<(PathBuf, Vec<String>)>,
    ) -> Result<RemoteJob, String> {
        if task.persistent {
            return Err("a persistent task cannot run through executor `remote`; vx keeps servers local".into());
        }
        output_paths(&task.outputs).map_err(|e| e.to_string())?;
        let cache = cache.cloned().ok_or("remote execution needs the workspace's cache to list inputs")?;
        let client = self.client()?;
        let env = task.env.iter().filter_map(|name| std::env::var(name).ok().map(|v| (name.clone(), v))).collect();
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
    /// What goes into the key for the executor: where it runs matters only
    /// through the instance and the platform.
    pub fn cache_identity(&self) -> String {
        let platform: Vec<String> = self.client.platform.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("remote:{}:{}", self.client.instance, platform.join(","))
    }

    /// The input files: the task's own, the global inputs, and the outputs
    /// of its dependencies (all workspace-relative).
    fn inputs(&self) -> Result<Vec<(String, PathBuf)>, String> {
        let mut files = self.cache.input_files(&self.root, &self.project_dir, &self.task).map_err(|e| e.to_string())?;
        files.extend(self.cache.global_files().into_iter().map(|rel| {
            let abs = self.root.join(&rel);
            (rel, abs)
        }));
        for (dir, globs) in &self.dep_outputs {
            let filter = GlobFilter::new(Some(globs), &[]).map_err(|e| e.to_string())?;
            let prefix = dir.strip_prefix(&self.root).unwrap_or(dir).to_string_lossy().into_owned();
            files.extend(list_files(dir, &filter, None, &[]).into_iter().map(|f| {
                let rel = if prefix.is_empty() { f.rel } else { format!("{prefix}/{}", f.rel) };
                (rel, f.abs)
            }));
        }
        files.sort();
        files.dedup_by(|a, b| a.0 == b.0);
        Ok(files)
    }
}

impl Job {
    /// Runs the task on the REAPI server; returns its status, its log and
    /// its exit code, like a local run.
    pub(super) async fn run_remote(&self, job: &RemoteJob, key: Option<&str>) -> (TaskStatus, Vec<u8>, Option<i32>) {
        self.term.started(&self.id, key);
        let failed = |why: String| {
            self.term.note(&self.id, &why);
            (TaskStatus::Failed(why), Vec::new(), None)
        };
        let inputs = {
            let job = job.clone();
            match tokio::task::spawn_blocking(move || job.inputs()).await {
                Ok(Ok(files)) => files,
                Ok(Err(why)) => return failed(format!("could not list its inputs: {why}")),
                Err(e) => return failed(format!("could not list its inputs: {e}")),
            }
        };
        let working_dir =
            job.project_dir.strip_prefix(&job.root).unwrap_or(&job.project_dir).to_string_lossy().into_owned();
        let mut env = job.env.clone();
        env.push(("VX_PROJECT".into(), self.mark.project.clone()));
        env.push(("VX_TASK".into(), self.mark.task.clone()));
        let spec = RemoteSpec {
            argv: std::iter::once(&self.command.program)
                .chain(&self.command.args)
                .map(|s| s.to_string_lossy().into_owned())
                .collect(),
            env,
            working_dir,
            output_paths: output_paths(&job.task.outputs).unwrap_or_default(),
            inputs,
            timeout: self.timeout,
            platform: job.client.platform.clone(),
            skip_cache_lookup: job.cache.force,
        };
        let (cancel_tx, cancel_rx) = tokio::sync::oneshot::channel::<()>();
        let (client, root) = (job.client.clone(), job.root.clone());
        let call = runtime().spawn(async move {
            client
                .execute_task(spec, root, async move {
                    let _ = cancel_rx.await;
                })
                .await
        });
        tokio::pin!(call);
        let far = Duration::from_secs(u64::MAX / 4);
        let deadline = tokio::time::sleep(self.timeout.map_or(far, |t| t + TIMEOUT_SLACK));
        tokio::pin!(deadline);
        let mut poll = tokio::time::interval(CANCEL_POLL);
        let mut cancel_tx = Some(cancel_tx);
        let mut timed_out = false;
        let joined = loop {
            tokio::select! {
                joined = &mut call => break joined,
                () = &mut deadline, if !timed_out => {
                    timed_out = true;
                    self.term.note(&self.id, "timed out; cancelling the remote operation");
                    if let Some(tx) = cancel_tx.take() { let _ = tx.send(()); }
                }
                _ = poll.tick(), if cancel_tx.is_some() => {
                    if self.cancelled.load(Ordering::SeqCst) && let Some(tx) = cancel_tx.take() {
                        let _ = tx.send(());
                    }
                }
            }
        };
        let timeout = self.timeout.unwrap_or_default();
        match joined {
            _ if timed_out => (TaskStatus::TimedOut(timeout), Vec::new(), None),
            _ if self.cancelled.load(Ordering::SeqCst) => (TaskStatus::Cancelled, Vec::new(), None),
            Ok(Ok(done)) => {
                for line in done.log.split_inclusive(|&b| b == b'\n') {
                    self.term.line(&self.id, line);
                }
                if done.cached {
                    self.term.note(&self.id, "the REAPI server answered from its action cache");
                }
                if done.exit_code == 0 {
                    (TaskStatus::Succeeded, done.log, Some(0))
                } else {
                    (TaskStatus::Failed(format!("exit code {}", done.exit_code)), done.log, Some(done.exit_code))
                }
            }
            Ok(Err(ExecError::TimedOut)) => {
                self.term.note(&self.id, "the remote worker stopped it at its timeout");
                (TaskStatus::TimedOut(timeout), Vec::new(), None)
            }
            Ok(Err(ExecError::Setup(why))) => failed(why),
            Ok(Err(ExecError::Remote(e))) => failed(remote_failure(&e)),
            Err(e) => failed(format!("the remote call crashed: {e}")),
        }
    }
}

fn remote_failure(e: &RemoteError) -> String {
    match e {
        RemoteError::Unavailable(m) => format!("the REAPI server is unavailable: {m}"),
        RemoteError::Refused(m) | RemoteError::Invalid(m) => m.clone(),
    }
}
