//! Comparing `vx.lock` with the configuration: every change for
//! `vx lock --check`, the first one as a refusal for `vx run --frozen`.

use super::{Lock, LockError, diff_locks};
use crate::config::Workspace;

/// The changes from `vx.lock` to what the configuration resolves to now;
/// empty when the file is up to date.
pub(crate) fn check(ws: &Workspace) -> Result<Vec<String>, LockError> {
    let old = Lock::read(&ws.root)?.ok_or(LockError::Missing)?;
    Ok(diff_locks(&old, &Lock::of(ws)))
}

/// `vx run --frozen`: the configuration must match `vx.lock`.
pub(crate) fn check_frozen(ws: &Workspace) -> Result<(), LockError> {
    let old = Lock::read(&ws.root)?.ok_or(LockError::FrozenMissing)?;
    let changes = diff_locks(&old, &Lock::of(ws));
    match changes.first() {
        None => Ok(()),
        Some(first) => Err(LockError::FrozenStale { first: first.clone(), more: changes.len() - 1 }),
    }
}
