//! A finished action's result: the declared outputs as they are after the
//! run (files, links, and directories as `Tree`s) and its stdout, every
//! blob uploaded before the lease completes, with the worker's timestamps.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::SystemTime;

use super::error::{LeaseError, infra};
use crate::paths::check_relative;
use crate::remote::{DigestFn, Reapi, TreeFile, TreeLink, build, re};

/// When the lease's phases began and ended, for `ExecutedActionMetadata`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeline {
    pub started: SystemTime,
    pub fetched: SystemTime,
    pub executed: SystemTime,
}

/// The `ActionResult` of a run that exited with `exit_code` and wrote `log`.
pub(super) async fn complete(
    cas: &Reapi,
    workdir: &Path,
    command: &re::Command,
    exit_code: i32,
    log: Vec<u8>,
    times: Timeline,
    bot_id: &str,
) -> Result<re::ActionResult, LeaseError> {
    let mut result = collect_outputs(cas, workdir, command).await?;
    let stdout = cas.caps.digest.of(&log);
    cas.upload(vec![(stdout.clone(), log)]).await?;
    result.stdout_digest = Some(stdout);
    result.exit_code = exit_code;
    let ts = |t: SystemTime| {
        let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        bazel_remote_apis::google::protobuf::Timestamp { seconds: d.as_secs() as i64, nanos: d.subsec_nanos() as i32 }
    };
    result.execution_metadata = Some(re::ExecutedActionMetadata {
        worker: bot_id.to_string(),
        worker_start_timestamp: Some(ts(times.started)),
        input_fetch_start_timestamp: Some(ts(times.started)),
        input_fetch_completed_timestamp: Some(ts(times.fetched)),
        execution_start_timestamp: Some(ts(times.fetched)),
        execution_completed_timestamp: Some(ts(times.executed)),
        worker_completed_timestamp: Some(ts(SystemTime::now())),
        ..Default::default()
    });
    Ok(result)
}

/// The declared outputs as they are after the run: files, links, and
/// directories as `Tree`s; every blob uploaded.
async fn collect_outputs(cas: &Reapi, workdir: &Path, command: &re::Command) -> Result<re::ActionResult, LeaseError> {
    let f = cas.caps.digest;
    let mut paths: Vec<String> = command.output_paths.clone();
    #[expect(deprecated, reason = "actions from REAPI v2.0 clients name outputs in these fields")]
    paths.extend(command.output_files.iter().chain(&command.output_directories).cloned());
    paths.sort();
    paths.dedup();
    let mut result = re::ActionResult::default();
    let mut blobs = Vec::new();
    for rel in paths {
        check_relative(&rel)?;
        let path = workdir.join(&rel);
        let Ok(meta) = tokio::fs::symlink_metadata(&path).await else { continue };
        if meta.file_type().is_symlink() {
            let target = tokio::fs::read_link(&path).await.map_err(infra)?;
            result.output_symlinks.push(re::OutputSymlink {
                path: rel,
                target: target.to_string_lossy().into_owned(),
                node_properties: None,
            });
        } else if meta.is_dir() {
            let (files, links, data) = read_dir_tree(f, &path).await?;
            let built = build(f, &files, &links);
            let tree = re::Tree { root: Some(built.root), children: built.children };
            let (tree_digest, tree_bytes) = f.of_message(&tree);
            blobs.extend(data);
            blobs.extend(built.dir_blobs);
            blobs.push((tree_digest.clone(), tree_bytes));
            result.output_directories.push(re::OutputDirectory {
                path: rel,
                tree_digest: Some(tree_digest),
                is_topologically_sorted: false,
                root_directory_digest: Some(built.root_digest),
            });
        } else {
            let data = tokio::fs::read(&path).await.map_err(infra)?;
            let digest = f.of(&data);
            result.output_files.push(re::OutputFile {
                path: rel,
                digest: Some(digest.clone()),
                is_executable: meta.permissions().mode() & 0o111 != 0,
                ..Default::default()
            });
            blobs.push((digest, data));
        }
    }
    cas.upload(blobs).await?;
    Ok(result)
}

type DirTree = (Vec<TreeFile>, Vec<TreeLink>, Vec<(re::Digest, Vec<u8>)>);

/// Every file and link under `root`, relative to it, with the file bytes.
async fn read_dir_tree(f: DigestFn, root: &Path) -> Result<DirTree, LeaseError> {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let (mut files, mut links, mut blobs) = (Vec::new(), Vec::new(), Vec::new());
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|e| LeaseError::Infra(format!("{}: {e}", dir.display())))?;
            for entry in entries {
                let path = entry.map_err(infra)?.path();
                let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().into_owned();
                let meta = std::fs::symlink_metadata(&path).map_err(infra)?;
                if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&path).map_err(infra)?;
                    links.push(TreeLink { rel, target: target.to_string_lossy().into_owned() });
                } else if meta.is_dir() {
                    stack.push(path);
                } else {
                    let data = std::fs::read(&path).map_err(infra)?;
                    let digest = f.of(&data);
                    files.push(TreeFile {
                        rel,
                        digest: digest.clone(),
                        executable: meta.permissions().mode() & 0o111 != 0,
                    });
                    blobs.push((digest, data));
                }
            }
        }
        Ok((files, links, blobs))
    })
    .await
    .map_err(infra)?
}
