//! A task's outputs through the cache: a hit's restored into the project
//! (and, for root-anchored outputs, the workspace), a success's archived
//! into an entry and stored in each writable tier, and the files a task's
//! outputs match now.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::archive::{self, OutputDirs};
use super::{Cache, CacheError, CacheKey, Entry, EntryHeader, KeyManifest, Restored};
use crate::config::Task;
use crate::inputs::{GlobFilter, OutputGlobs};

impl Cache {
    /// Restores a hit's outputs into the project (and, for root-anchored
    /// outputs, the workspace).
    pub(crate) fn restore(
        &self,
        root: &Path,
        project_dir: &Path,
        task: &Task,
        entry: &Entry,
    ) -> Result<Restored, CacheError> {
        if task.outputs.is_empty() && entry.header.outputs.is_empty() {
            return Ok(Restored::AlreadyThere);
        }
        self.with_output_dirs((root, project_dir), task, |dirs| {
            Ok(archive::unpack(dirs, &entry.archive, &entry.header.outputs, self.inputs.hasher())?)
        })
    }

    /// Calls `f` with where a task's outputs live: the project under its
    /// project-relative globs, and the workspace under its root-anchored
    /// ones, if any (what both a restore and a store walk).
    fn with_output_dirs<T>(
        &self,
        (root, project_dir): (&Path, &Path),
        task: &Task,
        f: impl FnOnce(OutputDirs<'_>) -> Result<T, CacheError>,
    ) -> Result<T, CacheError> {
        let outputs = OutputGlobs::split(&task.outputs);
        let anchored = outputs.has_anchored().then(|| self.inputs.filter(Some(&outputs.anchored), &[])).transpose()?;
        let globs = self.inputs.filter(Some(&outputs.project), &[])?;
        f(OutputDirs {
            workspace: root,
            project: project_dir,
            globs: &globs,
            root: anchored.as_deref().map(|a| (root, a)),
        })
    }

    /// Stores a successful run: its outputs, log, exit code and duration.
    pub(crate) fn save(
        &self,
        key: &CacheKey,
        manifest: KeyManifest,
        dirs: (&Path, &Path),
        task: &Task,
        log: &[u8],
        duration: Duration,
    ) -> Result<(), CacheError> {
        let (archive, outputs) = if task.outputs.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            self.with_output_dirs(dirs, task, |dirs| Ok(archive::pack(dirs, self.inputs.hasher())?))?
        };
        let header = EntryHeader {
            key: key.clone(),
            task: manifest.task.clone(),
            exit_code: 0,
            duration_ms: duration.as_millis() as u64,
            created_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            log_len: 0,
            archive_len: 0,
            body_hash: String::new(),
            outputs,
            manifest,
        };
        let bytes = Entry::encode(header, log, &archive);
        if let (Some(remote), true) = (&self.remote, self.mode.remote.write) {
            remote.put(&key.0, Arc::new(bytes.clone()));
        }
        if !self.mode.local.write {
            return Ok(());
        }
        self.store.put(key, &bytes).map_err(CacheError::Write)?;
        self.wrote.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// The files `task`'s outputs match now, as `(workspace-relative path,
/// absolute path)`: what its entry would hold if it were stored now.
pub(crate) fn output_files(root: &Path, project_dir: &Path, task: &Task) -> Result<Vec<(String, PathBuf)>, CacheError> {
    let outputs = OutputGlobs::split(&task.outputs);
    let globs = GlobFilter::new(Some(&outputs.project), &[])?;
    let anchored = outputs.has_anchored().then(|| GlobFilter::new(Some(&outputs.anchored), &[])).transpose()?;
    let dirs =
        OutputDirs { workspace: root, project: project_dir, globs: &globs, root: anchored.as_ref().map(|a| (root, a)) };
    Ok(dirs.in_workspace()?)
}
