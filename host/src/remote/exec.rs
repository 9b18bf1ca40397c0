//! Remote execution (`executor = "remote"`, `--executor remote`): a task
//! becomes a REAPI `Action` — its command, its declared inputs, the
//! outputs of the tasks it depends on and the global inputs as the input
//! root — uploaded where the server lacks it, executed, and its outputs
//! downloaded into the project, checked like a cache restore.
//!
//! The operation is streamed until done; when the stream breaks it is
//! resumed with `WaitExecution`. Cancelling (Ctrl-C, the task's timeout)
//! cancels the remote operation before returning.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bazel_remote_apis::google::longrunning::{
    CancelOperationRequest, Operation, operation, operations_client::OperationsClient,
};
use futures_util::StreamExt;
use prost::Message;

use super::client::{Reapi, RemoteError};
use super::digest::show;
use super::re;
use super::tree::{TreeFile, TreeLink, build, tree_entries};
use crate::paths::{check_link, check_no_link_on_the_way, check_relative};

/// How long a cancelled execution waits for the operation's name.
const FIRST_MESSAGE_WAIT: Duration = Duration::from_secs(5);

/// Everything one task needs to run remotely.
#[derive(Debug, Clone)]
pub(crate) struct RemoteSpec {
    pub argv: Vec<String>,
    /// Sorted by name (REAPI requires it).
    pub env: Vec<(String, String)>,
    /// The project directory, workspace-relative (`""` for the root).
    pub working_dir: String,
    /// Output paths relative to the working directory.
    pub output_paths: Vec<String>,
    /// Input files: workspace-relative path and where to read it.
    pub inputs: Vec<(String, PathBuf)>,
    pub timeout: Option<Duration>,
    pub platform: BTreeMap<String, String>,
    /// `--force`: the server must run it, not answer from its action cache.
    pub skip_cache_lookup: bool,
}

/// How a remote execution ended.
#[derive(Debug)]
pub(crate) struct Executed {
    pub exit_code: i32,
    /// stdout then stderr (a worker of vx's sends them interleaved as stdout).
    pub log: Vec<u8>,
    /// The server answered from its own action cache.
    pub cached: bool,
}

/// Why a remote execution did not run to an exit code.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExecError {
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The server stopped it at the action's timeout.
    #[error("the remote worker stopped it at its timeout")]
    TimedOut,
    /// The task could not be made into an action (an unreadable input…).
    #[error("{0}")]
    Setup(String),
}

/// An output glob with no fixed directory in front, which REAPI cannot name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the output glob `{0}` starts with a pattern; remote execution needs a fixed directory in front (like `dist/**`)"
)]
pub(crate) struct OutputPathError(String);

/// The fixed directory in front of each output glob (`dist/**` → `dist`);
/// an error for a glob with none, since REAPI needs output paths.
pub(crate) fn output_paths(globs: &[String]) -> Result<Vec<String>, OutputPathError> {
    let mut out: Vec<String> = Vec::new();
    for glob in globs.iter().filter(|g| !g.starts_with('!')) {
        let fixed: Vec<&str> = glob
            .trim_start_matches("./")
            .split('/')
            .take_while(|part| !part.contains(['*', '?', '[', '{']))
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        if fixed.is_empty() {
            return Err(OutputPathError(glob.clone()));
        }
        out.push(fixed.join("/"));
    }
    out.sort();
    // `dist` covers `dist/types`.
    out.dedup_by(|later, earlier| later == earlier || later.starts_with(&format!("{earlier}/")));
    Ok(out)
}

impl Reapi {
    /// Runs `spec` remotely and writes its outputs under `root`. `cancel`
    /// resolving cancels the operation.
    pub(crate) async fn execute_task(
        &self,
        spec: RemoteSpec,
        root: PathBuf,
        cancel: impl std::future::Future<Output = ()>,
    ) -> Result<Executed, ExecError> {
        let f = self.caps.digest;
        let (files, mut blobs) = read_inputs(f, spec.inputs.clone()).await?;
        let tree = build(f, &files, &[]);
        blobs.extend(tree.dir_blobs);
        let mut env = spec.env.clone();
        env.sort();
        let platform = re::Platform {
            properties: spec
                .platform
                .iter()
                .map(|(k, v)| re::platform::Property { name: k.clone(), value: v.clone() })
                .collect(),
        };
        let command = re::Command {
            arguments: spec.argv.clone(),
            environment_variables: env
                .into_iter()
                .map(|(name, value)| re::command::EnvironmentVariable { name, value })
                .collect(),
            output_paths: spec.output_paths.clone(),
            working_directory: spec.working_dir.clone(),
            ..Default::default()
        };
        let (command_digest, command_bytes) = f.of_message(&command);
        let action = re::Action {
            command_digest: Some(command_digest.clone()),
            input_root_digest: Some(tree.root_digest.clone()),
            timeout: spec.timeout.map(|t| bazel_remote_apis::google::protobuf::Duration {
                seconds: t.as_secs() as i64,
                nanos: t.subsec_nanos() as i32,
            }),
            platform: (!platform.properties.is_empty()).then_some(platform),
            ..Default::default()
        };
        let (action_digest, action_bytes) = f.of_message(&action);
        blobs.push((command_digest, command_bytes));
        blobs.push((action_digest.clone(), action_bytes));
        self.upload(blobs).await?;

        let response = self.run_operation(&action_digest, spec.skip_cache_lookup, cancel).await?;
        let response = response.ok_or_else(|| ExecError::Remote(RemoteError::Unavailable("cancelled".into())))?;
        if let Some(status) = response.status.as_ref().filter(|s| s.code != 0) {
            if status.code == tonic::Code::DeadlineExceeded as i32 {
                return Err(ExecError::TimedOut);
            }
            let code = tonic::Code::from_i32(status.code);
            return Err(ExecError::Remote(RemoteError::Refused(format!(
                "remote execution failed: {} ({code:?})",
                status.message.trim()
            ))));
        }
        let result = response.result.unwrap_or_default();
        let log = self.log_of(&result).await?;
        if result.exit_code == 0 {
            let base = root.join(&spec.working_dir);
            self.write_outputs(&result, &base, &spec.output_paths).await?;
        }
        Ok(Executed { exit_code: result.exit_code, log, cached: response.cached_result })
    }

    /// Execute, streamed until done; `None` when cancelled (the remote
    /// operation is cancelled too).
    async fn run_operation(
        &self,
        action: &re::Digest,
        skip_cache_lookup: bool,
        cancel: impl std::future::Future<Output = ()>,
    ) -> Result<Option<re::ExecuteResponse>, RemoteError> {
        let mut exec = re::execution_client::ExecutionClient::new(self.channel.clone())
            .max_decoding_message_size(super::client::MAX_MESSAGE);
        let req = re::ExecuteRequest {
            instance_name: self.instance.clone(),
            skip_cache_lookup,
            action_digest: Some(action.clone()),
            digest_function: self.caps.digest.proto(),
            ..Default::default()
        };
        let mut stream = exec
            .execute(self.req_unbounded(req))
            .await
            .map_err(|s| RemoteError::from_status("Execute", &s))?
            .into_inner();
        let mut name = String::new();
        tokio::pin!(cancel);
        let mut resumes = 0;
        loop {
            let next = tokio::select! {
                next = stream.next() => next,
                () = &mut cancel => {
                    self.cancel_stream(name, &mut stream).await;
                    return Ok(None);
                }
            };
            match next {
                Some(Ok(op)) => {
                    name.clone_from(&op.name);
                    if op.done {
                        return done(&name, op.result).map(Some);
                    }
                }
                // The stream broke off (a server restart, a proxy): resume it.
                Some(Err(_)) | None if !name.is_empty() && resumes < 3 => {
                    resumes += 1;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let req = re::WaitExecutionRequest { name: name.clone() };
                    stream = exec
                        .wait_execution(self.req_unbounded(req))
                        .await
                        .map_err(|s| RemoteError::from_status("WaitExecution", &s))?
                        .into_inner();
                }
                Some(Err(s)) => return Err(RemoteError::from_status("Execute", &s)),
                None => {
                    return Err(RemoteError::Unavailable(
                        "the Execute stream ended before the operation was done".into(),
                    ));
                }
            }
        }
    }

    /// Cancels the operation of `stream`, known as `name` so far.
    /// Cancelled before the server named it, it waits a
    /// little for the first message, or the action would run on with
    /// nobody waiting for it.
    async fn cancel_stream(&self, mut name: String, stream: &mut tonic::Streaming<Operation>) {
        if name.is_empty()
            && let Ok(Some(Ok(op))) = tokio::time::timeout(FIRST_MESSAGE_WAIT, stream.next()).await
        {
            name = op.name;
        }
        if !name.is_empty() {
            self.cancel_operation(&name).await;
        }
    }

    async fn cancel_operation(&self, name: &str) {
        let mut ops = OperationsClient::new(self.channel.clone());
        let req = self.req(CancelOperationRequest { name: name.to_string() });
        if let Err(s) = self.unary(ops.cancel_operation(req)).await {
            tracing::warn!("could not cancel the remote operation {name}: {}", s.message());
        }
    }

    /// stdout then stderr of a result.
    async fn log_of(&self, result: &re::ActionResult) -> Result<Vec<u8>, RemoteError> {
        let digests: Vec<re::Digest> = [&result.stdout_digest, &result.stderr_digest]
            .into_iter()
            .flatten()
            .filter(|d| d.size_bytes > 0)
            .cloned()
            .collect();
        let got = self.download(&digests).await?;
        let mut log = result.stdout_raw.clone();
        if let Some(d) = &result.stdout_digest {
            log.extend_from_slice(got.get(&d.hash).map_or(&[][..], Vec::as_slice));
        }
        log.extend_from_slice(&result.stderr_raw);
        if let Some(d) = &result.stderr_digest {
            log.extend_from_slice(got.get(&d.hash).map_or(&[][..], Vec::as_slice));
        }
        Ok(log)
    }

    /// Writes a result's outputs under `base` (the project directory):
    /// every path checked first, the declared output paths cleared, then
    /// files and links written.
    pub(crate) async fn write_outputs(
        &self,
        result: &re::ActionResult,
        base: &Path,
        declared: &[String],
    ) -> Result<(), RemoteError> {
        let f = self.caps.digest;
        let mut files: Vec<TreeFile> = Vec::new();
        let mut links: Vec<TreeLink> = Vec::new();
        for o in &result.output_files {
            let digest =
                o.digest.clone().ok_or_else(|| RemoteError::Invalid(format!("output {} has no digest", o.path)))?;
            files.push(TreeFile { rel: o.path.clone(), digest, executable: o.is_executable });
        }
        links.extend(result.output_symlinks.iter().map(|l| TreeLink { rel: l.path.clone(), target: l.target.clone() }));
        let tree_digests: Vec<re::Digest> =
            result.output_directories.iter().filter_map(|d| d.tree_digest.clone()).collect();
        let trees = self.download(&tree_digests).await?;
        for d in &result.output_directories {
            let digest = d
                .tree_digest
                .as_ref()
                .ok_or_else(|| RemoteError::Invalid(format!("output dir {} has no tree", d.path)))?;
            let tree = re::Tree::decode(trees[&digest.hash].as_slice())
                .map_err(|e| RemoteError::Invalid(format!("tree {} does not decode: {e}", show(digest))))?;
            let (more_files, more_links) = tree_entries(f, &tree, &d.path)?;
            files.extend(more_files);
            links.extend(more_links);
        }
        for rel in files.iter().map(|f| &f.rel).chain(links.iter().map(|l| &l.rel)) {
            check_relative(rel)?;
            check_no_link_on_the_way(base, rel)?;
        }
        for l in &links {
            check_link(&l.rel, &l.target)?;
        }
        let digests: Vec<re::Digest> = files.iter().map(|f| f.digest.clone()).collect();
        let blobs = self.download(&digests).await?;
        let base = base.to_path_buf();
        let declared = declared.to_vec();
        tokio::task::spawn_blocking(move || write_all(&base, &declared, &files, &links, &blobs))
            .await
            .map_err(|e| RemoteError::Invalid(format!("writing outputs: {e}")))?
            .map_err(RemoteError::Invalid)
    }
}

/// The response of a finished operation. An operation that ran past its
/// deadline is a response too, so the caller reports a timeout, not a failure.
fn done(name: &str, result: Option<operation::Result>) -> Result<re::ExecuteResponse, RemoteError> {
    match result {
        Some(operation::Result::Response(any)) => re::ExecuteResponse::decode(any.value.as_slice())
            .map_err(|e| RemoteError::Invalid(format!("ExecuteResponse does not decode: {e}"))),
        Some(operation::Result::Error(status)) if status.code == tonic::Code::DeadlineExceeded as i32 => {
            Ok(re::ExecuteResponse { status: Some(status), ..Default::default() })
        }
        Some(operation::Result::Error(status)) => {
            Err(RemoteError::Refused(format!("operation {name} failed: {}", status.message)))
        }
        None => Err(RemoteError::Invalid(format!("operation {name} is done without a result"))),
    }
}

fn write_all(
    base: &Path,
    declared: &[String],
    files: &[TreeFile],
    links: &[TreeLink],
    blobs: &std::collections::HashMap<String, Vec<u8>>,
) -> Result<(), String> {
    for out in declared {
        let path = base.join(out);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path).map_err(|e| format!("clear {out}: {e}"))?,
            Ok(_) => std::fs::remove_file(&path).map_err(|e| format!("clear {out}: {e}"))?,
            Err(_) => {}
        }
    }
    // Through a handle on `base`: the checks before this give the clear
    // error, the kernel keeps anything they missed inside.
    let dir = crate::paths::Contained::open(base).map_err(|e| format!("{}: {e}", base.display()))?;
    for file in files {
        let mode = if file.executable { 0o755 } else { 0o644 };
        let data = blobs.get(&file.digest.hash).ok_or_else(|| format!("{}: its blob was not fetched", file.rel))?;
        dir.write_file(&file.rel, data, mode).map_err(|e| format!("{}: {e}", file.rel))?;
    }
    for link in links {
        let _ = dir.remove_file(&link.rel);
        dir.symlink(&link.rel, &link.target).map_err(|e| format!("{}: {e}", link.rel))?;
    }
    Ok(())
}

/// Reads the input files (on a blocking thread) into tree entries and blobs.
async fn read_inputs(
    f: super::DigestFn,
    inputs: Vec<(String, PathBuf)>,
) -> Result<(Vec<TreeFile>, Vec<(re::Digest, Vec<u8>)>), ExecError> {
    tokio::task::spawn_blocking(move || {
        let mut files = Vec::with_capacity(inputs.len());
        let mut blobs = Vec::with_capacity(inputs.len());
        for (rel, abs) in inputs {
            let data = std::fs::read(&abs).map_err(|e| ExecError::Setup(format!("could not read input {rel}: {e}")))?;
            let executable = std::fs::metadata(&abs).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
            let digest = f.of(&data);
            files.push(TreeFile { rel, digest: digest.clone(), executable });
            blobs.push((digest, data));
        }
        Ok((files, blobs))
    })
    .await
    .map_err(|e| ExecError::Setup(format!("reading inputs: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_are_the_fixed_prefixes() {
        let globs = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            output_paths(&globs(&["dist/**", "dist/types/*.d.ts", "out.txt", "!dist/x"])).unwrap(),
            ["dist", "out.txt"]
        );
        assert_eq!(output_paths(&globs(&["./build/**/*.js"])).unwrap(), ["build"]);
        assert!(output_paths(&globs(&["**/*.js"])).unwrap_err().to_string().contains("fixed directory"));
    }
}
