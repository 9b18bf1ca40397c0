//! Writing what `vx init` rendered: refused as a whole when any file
//! exists (unless forced), each file written beside and renamed over so a
//! reader never sees half of one, and the result loaded back as a check.

use std::path::Path;

use crate::config::translate::InitError;

type Result<T, E = InitError> = std::result::Result<T, E>;
use crate::config::load_workspace;
use crate::config::translate::RenderedFile;

/// Refuses to write when any of `files` exists at `root`, unless `force`.
pub(crate) fn refuse_existing(root: &Path, files: &[RenderedFile], force: bool) -> Result<()> {
    if force {
        return Ok(());
    }
    let existing: Vec<&str> = files.iter().filter(|f| root.join(&f.path).exists()).map(|f| f.path.as_str()).collect();
    match existing.as_slice() {
        [] => Ok(()),
        [one] => Err(InitError::Exists { path: one.to_string() }),
        [first, rest @ ..] => Err(InitError::ExistMany { first: first.to_string(), more: rest.len() }),
    }
}

/// Writes one file under `root`, atomically.
pub(crate) fn write_file(root: &Path, file: &RenderedFile) -> Result<()> {
    let path = root.join(&file.path);
    let tmp = path.with_file_name(".vx.toml.init-tmp");
    std::fs::write(&tmp, &file.text).map_err(|source| InitError::Write { path: tmp.clone(), source })?;
    std::fs::rename(&tmp, &path).map_err(|source| InitError::Write { path, source })
}

/// Loads the workspace at `root` as vx will: what `vx init` wrote must load.
pub(crate) fn check_written(root: &Path) -> Result<()> {
    load_workspace(root).map(drop).map_err(|e| InitError::WrittenDoesNotLoad(e.into()))
}
