//! A lease's inputs: the `Action` (inline in the payload or by digest),
//! its `Command`, and its input root written into a fresh directory.

use std::path::Path;
use std::sync::Arc;

use prost::Message;

use super::error::{LeaseError, infra};
use crate::paths::{Contained, check_link};
use crate::remote::{Reapi, TreeFile, TreeLink, re};

/// File blobs fetched per download while materialising.
const FETCH_BATCH: usize = 256;

/// The action a lease's payload holds or names, and its command.
pub(super) async fn fetch_action(
    cas: &Reapi,
    payload: Option<prost_types::Any>,
) -> Result<(re::Action, re::Command), LeaseError> {
    let payload = payload.ok_or_else(|| LeaseError::Bad("the lease has no payload".into()))?;
    let action = if payload.type_url.ends_with("build.bazel.remote.execution.v2.Action") {
        re::Action::decode(payload.value.as_slice())
            .map_err(|e| LeaseError::Bad(format!("the Action does not decode: {e}")))?
    } else if payload.type_url.ends_with("build.bazel.remote.execution.v2.Digest") {
        let digest = re::Digest::decode(payload.value.as_slice()).map_err(|e| LeaseError::Bad(e.to_string()))?;
        let blob = cas.download(std::slice::from_ref(&digest)).await?;
        re::Action::decode(blob[&digest.hash].as_slice()).map_err(|e| LeaseError::Bad(e.to_string()))?
    } else {
        return Err(LeaseError::Bad(format!("unknown lease payload type {}", payload.type_url)));
    };
    let command_digest =
        action.command_digest.clone().ok_or_else(|| LeaseError::Bad("the Action has no command".into()))?;
    let command_blob = cas.download(std::slice::from_ref(&command_digest)).await?;
    let command = re::Command::decode(command_blob[&command_digest.hash].as_slice())
        .map_err(|e| LeaseError::Bad(format!("the Command does not decode: {e}")))?;
    Ok((action, command))
}

/// Writes the action's input root into `dir` (made fresh).
pub(super) async fn materialise(cas: &Reapi, action: &re::Action, dir: &Path) -> Result<(), LeaseError> {
    let root =
        action.input_root_digest.clone().ok_or_else(|| LeaseError::Bad("the Action has no input root".into()))?;
    let (files, links) = cas.fetch_tree(&root).await?;
    let _ = tokio::fs::remove_dir_all(dir).await;
    tokio::fs::create_dir_all(dir).await.map_err(|e| LeaseError::Infra(format!("create {}: {e}", dir.display())))?;
    write_files(cas, dir, &files).await?;
    write_links(dir, &links).await
}

/// The tree's files, their blobs fetched in batches, written through a
/// handle on `dir` so that no path (whatever a check missed) leaves it.
async fn write_files(cas: &Reapi, dir: &Path, files: &[TreeFile]) -> Result<(), LeaseError> {
    let root = Arc::new(Contained::open(dir).map_err(infra)?);
    for part in files.chunks(FETCH_BATCH) {
        let digests: Vec<re::Digest> = part.iter().map(|f| f.digest.clone()).collect();
        let blobs = cas.download(&digests).await?;
        let (root, part) = (root.clone(), part.to_vec());
        tokio::task::spawn_blocking(move || {
            for file in &part {
                let data = blobs
                    .get(&file.digest.hash)
                    .ok_or_else(|| LeaseError::Infra(format!("{}: its blob was not fetched", file.rel)))?;
                let mode = if file.executable { 0o755 } else { 0o644 };
                root.write_file(&file.rel, data, mode).map_err(infra)?;
            }
            Ok::<(), LeaseError>(())
        })
        .await
        .map_err(|e| LeaseError::Infra(format!("writing the input root: {e}")))??;
    }
    Ok(())
}

/// The tree's symbolic links, each checked to point inside the root.
async fn write_links(dir: &Path, links: &[TreeLink]) -> Result<(), LeaseError> {
    let root = Contained::open(dir).map_err(infra)?;
    for link in links {
        check_link(&link.rel, &link.target)?;
        root.symlink(&link.rel, &link.target).map_err(infra)?;
    }
    Ok(())
}
