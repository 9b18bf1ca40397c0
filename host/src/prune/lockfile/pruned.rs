//! The lockfile in use found and its text handed to its format's writer,
//! or refused with a line that says why.

use std::collections::BTreeSet;
use std::path::Path;

use super::{berry, bun, npm, pnpm};
use crate::error::{Error, Result};
use crate::lockfile::{LockfileKind, MAX_LOCKFILE_BYTES, find_lockfile};

/// A pruned lockfile: its file name at the root and its text.
pub(in crate::prune) struct PrunedLockfile {
    pub(in crate::prune) name: String,
    pub(in crate::prune) text: String,
}

/// The root's lockfile pruned to the projects at `kept` (relative
/// directories, `.` for the root, which is always kept); `None` when the
/// workspace has no lockfile.
pub(in crate::prune) fn prune_lockfile(root: &Path, kept: &BTreeSet<String>) -> Result<Option<PrunedLockfile>> {
    let found = find_lockfile(root).map_err(|e| {
        Error::config(e.to_string()).with_hint("keep one package manager's lockfile, or name it in \"packageManager\"")
    })?;
    let Some((kind, path)) = found else { return Ok(None) };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let refuse = |what: &str| {
        Error::config(format!("prune {name}: {what}"))
            .with_hint("install with a package manager whose lockfile vx prunes (docs/cli.md, \"vx prune\")")
    };
    if name == "bun.lockb" {
        return Err(refuse("the binary bun.lockb is not pruned (bun 1.2 and later write the text bun.lock)"));
    }
    let size = std::fs::metadata(&path).map_err(|e| Error::io(format!("read {}", path.display()), e))?.len();
    if size > MAX_LOCKFILE_BYTES {
        return Err(refuse(&format!("it is {size} bytes, over the {MAX_LOCKFILE_BYTES}-byte limit")));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(format!("read {}", path.display()), e))?;
    let pruned = match kind {
        LockfileKind::Npm => npm::prune(&text, kept),
        LockfileKind::Pnpm => pnpm::prune(&text, kept),
        LockfileKind::Yarn if text.lines().any(|l| l.starts_with("__metadata:")) => berry::prune(&text, kept),
        LockfileKind::Yarn => Err("a yarn classic (v1) lockfile is not pruned; yarn 2 and later are".to_string()),
        LockfileKind::Bun => bun::prune(&text, kept),
    };
    let text = pruned.map_err(|what| refuse(&crate::error::one_line(&what)))?;
    Ok(Some(PrunedLockfile { name, text }))
}
