//! Every lockfile format vx reads, parsed from the file as a run parses
//! it, then sliced for every project it knows, as keys use it.

use vx::fuzzing::{Lockfile, LockfileKind};

use crate::assert_one_line;
use crate::files::with_files;

fn parse(data: &[u8], kind: LockfileKind, names: &[&str]) {
    with_files(data, names, |root| match Lockfile::parse_file(root, kind, &root.join(names[0])) {
        Ok(lock) => slice_all(&lock),
        Err(e) => assert_one_line(&e.to_string()),
    });
}

fn slice_all(lock: &Lockfile) {
    let projects: Vec<String> = lock.projects().map(str::to_string).collect();
    for dir in projects.iter().map(String::as_str).chain(["", "packages/a", "missing"]) {
        let slice = lock.slice(dir);
        let _ = lock.slice_digest(dir);
        let _ = lock.is_complete(dir);
        assert!(slice.is_empty() || lock.has_project(dir), "a slice for a project the lockfile does not know: {dir}");
    }
}

/// `package-lock.json` v2/v3.
pub fn lock_npm(data: &[u8]) {
    parse(data, LockfileKind::Npm, &["package-lock.json"]);
}

/// `pnpm-lock.yaml` v6/v9.
pub fn lock_pnpm(data: &[u8]) {
    parse(data, LockfileKind::Pnpm, &["pnpm-lock.yaml"]);
}

/// `yarn.lock`, classic and berry; classic reads the workspace manifests
/// too, so those follow the lockfile in the input.
pub fn lock_yarn(data: &[u8]) {
    parse(
        data,
        LockfileKind::Yarn,
        &["yarn.lock", "package.json", "packages/a/package.json", "packages/b/package.json"],
    );
}

/// The text `bun.lock`.
pub fn lock_bun(data: &[u8]) {
    parse(data, LockfileKind::Bun, &["bun.lock"]);
}
