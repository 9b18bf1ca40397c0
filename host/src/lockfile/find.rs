//! Which lockfile of the workspace root is the one in use.
//!
//! Precedence, as Turborepo decides it:
//!
//! 1. The root `package.json`'s `packageManager` field (`pnpm@9.15.0`)
//!    names the manager; its lockfile is the one, and any other lockfile is
//!    a leftover. If that manager's lockfile is missing, there is none.
//! 2. Otherwise the lockfiles present decide: one manager's lockfile is the
//!    one. Lockfiles of two or more managers are ambiguous; Turborepo
//!    refuses to run, vx answers [`LockfileError::Ambiguous`], and the
//!    caller hashes all of them whole (so no change to any can be missed)
//!    with a notice to set `packageManager` or delete the leftover.
//!
//! Within one manager: `npm-shrinkwrap.json` over `package-lock.json`
//! (npm's own order), `bun.lock` over the binary `bun.lockb` (bun's).

use std::path::{Path, PathBuf};

use super::LockfileError;
use super::read::read_text;

/// The package manager whose lockfile a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockfileKind {
    Npm,
    Pnpm,
    Yarn,
    Bun,
}

/// Every lockfile name read, in each manager's own order of preference.
pub(crate) const LOCKFILE_NAMES: [(&str, LockfileKind); 6] = [
    ("npm-shrinkwrap.json", LockfileKind::Npm),
    ("package-lock.json", LockfileKind::Npm),
    ("pnpm-lock.yaml", LockfileKind::Pnpm),
    ("yarn.lock", LockfileKind::Yarn),
    ("bun.lock", LockfileKind::Bun),
    ("bun.lockb", LockfileKind::Bun),
];

/// The lockfile in use at `root`, if any (see the module docs).
pub(crate) fn find_lockfile(root: &Path) -> Result<Option<(LockfileKind, PathBuf)>, LockfileError> {
    let present: Vec<(LockfileKind, PathBuf)> =
        LOCKFILE_NAMES.iter().map(|&(name, kind)| (kind, root.join(name))).filter(|(_, path)| path.is_file()).collect();
    let first_of = |kind| present.iter().find(|(k, _)| *k == kind).cloned();
    if let Some(kind) = declared_manager(root) {
        return Ok(first_of(kind));
    }
    let Some((kind, _)) = present.first() else {
        return Ok(None);
    };
    if present.iter().any(|(k, _)| k != kind) {
        return Err(LockfileError::Ambiguous { found: present.into_iter().map(|(_, path)| path).collect() });
    }
    Ok(first_of(*kind))
}

/// The manager the root `package.json` names in `packageManager`. A
/// missing, unreadable or unknown one names none: the lockfiles decide.
fn declared_manager(root: &Path) -> Option<LockfileKind> {
    let text = read_text(&root.join("package.json"), 16 * 1024 * 1024).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    let declared = manifest.get("packageManager")?.as_str()?;
    match declared.split('@').next()? {
        "npm" => Some(LockfileKind::Npm),
        "pnpm" => Some(LockfileKind::Pnpm),
        "yarn" => Some(LockfileKind::Yarn),
        "bun" => Some(LockfileKind::Bun),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testutil::ScratchDir;

    #[test]
    fn one_managers_lockfile_is_chosen_in_its_own_order() {
        let ws = ScratchDir::new("find-one");
        assert_eq!(find_lockfile(ws.path()).expect("finds"), None);
        ws.write("package-lock.json", "{}");
        ws.write("npm-shrinkwrap.json", "{}");
        let found = find_lockfile(ws.path()).expect("finds");
        assert_eq!(found, Some((LockfileKind::Npm, ws.path().join("npm-shrinkwrap.json"))));
    }

    #[test]
    fn two_managers_are_ambiguous_unless_package_manager_decides() {
        let ws = ScratchDir::new("find-two");
        ws.write("package-lock.json", "{}");
        ws.write("yarn.lock", "");
        let err = find_lockfile(ws.path()).unwrap_err();
        assert_eq!(err.files().len(), 2);
        assert!(err.to_string().starts_with("choose a lockfile: found "), "{err}");
        ws.write("package.json", r#"{"packageManager": "yarn@4.5.0+sha512.abc"}"#);
        let found = find_lockfile(ws.path()).expect("finds");
        assert_eq!(found, Some((LockfileKind::Yarn, ws.path().join("yarn.lock"))));
        ws.write("package.json", r#"{"packageManager": "pnpm@9.0.0"}"#);
        assert_eq!(find_lockfile(ws.path()).expect("finds"), None);
    }
}
