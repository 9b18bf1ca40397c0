//! What a task's key takes from the package manager: its project's
//! `package.json` (normalised, from `config`) and its project's slice of
//! the workspace lockfile (`crate::lockfile`), read once per invocation.
//!
//! Parsing a 2,000-package lockfile and slicing it for 500 projects costs
//! more than the rest of a fully cached run, so the slice digests are kept
//! in `.vx/lockfile-slices.json` under a digest of the lockfile's bytes and
//! of every project's `package.json` (yarn classic resolves through the
//! manifests, and a project added or removed changes the set). A warm run
//! reads the lockfile's bytes once to hash them and parses nothing. Each
//! distinct slice is also written to `.vx/slices/DIGEST.json`, so `vx why`
//! can name the dependency that moved between two keys.
//!
//! The workspace root's own dependencies are in every other project's keys
//! too: a tool declared only in the root `package.json` (`vitest` in the
//! root `devDependencies`, run by every package's `test`) is used by
//! tasks whose own manifests never name it. Turborepo's global hash holds
//! the same. Taken are the root's dependency declarations and its
//! importer's lockfile slice, not its whole manifest (a new root script
//! changes no task), and vx narrows them for no task: it cannot prove
//! which tools a command runs.
//!
//! A lockfile vx cannot read is hashed whole, for every project, with a
//! one-line notice each invocation; one that cannot even be opened leaves
//! the tasks uncached, each with that reason, since no key would be sound.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Workspace;
use crate::lockfile::{
    DepsDigest, Lockfile, LockfileError, LockfileKind, ResolvedDep, find_lockfile, root_dependencies, whole_file_digest,
};

/// Bumped when the memo's meaning changes, so an old memo is recomputed.
const MEMO_VERSION: u32 = 2;

/// What one project's tasks take from the package manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LockPart {
    /// No lockfile at the root.
    None,
    /// The project's slice of a lockfile vx read.
    Slice(DepsDigest),
    /// A lockfile vx could not read, hashed whole.
    Whole(DepsDigest),
    /// The lockfile could not be read at all: tasks are not cached.
    Unreadable(String),
}

impl LockPart {
    /// The form a key manifest records: `slice:HEX`, `whole:HEX` or empty.
    pub(crate) fn manifest_text(&self) -> String {
        match self {
            LockPart::None | LockPart::Unreadable(_) => String::new(),
            LockPart::Slice(d) => format!("slice:{d}"),
            LockPart::Whole(d) => format!("whole:{d}"),
        }
    }
}

/// What one project's tasks' keys take from its package manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProjectDeps {
    /// The normalised `package.json` digest, when the project has one.
    pub package_json: Option<blake3::Hash>,
    pub lockfile: LockPart,
    /// The workspace root's dependencies (`deps:HEX` for its declared
    /// dependencies, then its lockfile part), empty for the root project
    /// itself and for a root without dependencies.
    pub root: String,
}

static NO_DEPS: ProjectDeps = ProjectDeps { package_json: None, lockfile: LockPart::None, root: String::new() };

/// Each project's [`ProjectDeps`], by project directory.
#[derive(Debug, Default)]
pub(crate) struct DepsTable {
    by_dir: HashMap<PathBuf, ProjectDeps>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Memo {
    version: u32,
    /// Digest of the lockfile's bytes and the projects' manifests.
    input: String,
    /// The notice to repeat when the lockfile was hashed whole.
    notice: Option<String>,
    /// `rel_dir` → `slice:HEX` / `whole:HEX`.
    parts: BTreeMap<String, String>,
}

impl DepsTable {
    /// Reads the workspace's lockfile part for every project, from the memo
    /// in `state` when its input digest still matches. Never fails: what
    /// cannot be read becomes `Whole` or `Unreadable` with a warning.
    pub(crate) fn load(ws: &Workspace, state: &Path) -> DepsTable {
        let found = match find_lockfile(&ws.root) {
            Ok(Some(found)) => Ok(found),
            Ok(None) => return DepsTable::with(ws, |_| LockPart::None, root_declared(&ws.root)),
            Err(e) => Err(e),
        };
        let input = match memo_input(ws, found.as_ref().map(|(_, path)| path.as_path()).map_err(|e| e.files())) {
            Ok(input) => input,
            Err(why) => {
                tracing::warn!("{why}; tasks are not cached until it can be read");
                return DepsTable::with(ws, |_| LockPart::Unreadable(why.clone()), String::new());
            }
        };
        let memo_path = state.join("lockfile-slices.json");
        let memo = read_memo(&memo_path, &input).unwrap_or_else(|| {
            let memo = compute(ws, found, state, input);
            if let Ok(json) = serde_json::to_vec(&memo) {
                // A memo that cannot be written only costs the next run a parse.
                let _ = std::fs::create_dir_all(state).and_then(|()| crate::paths::write_atomic(&memo_path, &json));
            }
            memo
        });
        if let Some(notice) = &memo.notice {
            tracing::warn!("{notice}");
        }
        let part = |rel_dir: &str| memo.parts.get(rel_dir).and_then(|t| parse_part(t)).unwrap_or(LockPart::None);
        let root = root_text(root_declared(&ws.root), &part(".").manifest_text());
        DepsTable::with(ws, part, root)
    }

    fn with(ws: &Workspace, lockfile: impl Fn(&str) -> LockPart, root: String) -> DepsTable {
        let by_dir = ws
            .projects
            .iter()
            .map(|p| {
                let root = if p.rel_dir == "." { String::new() } else { root.clone() };
                (p.dir.clone(), ProjectDeps { package_json: p.package_json, lockfile: lockfile(&p.rel_dir), root })
            })
            .collect();
        DepsTable { by_dir }
    }

    /// What the project at `dir` takes (nothing, for a directory the
    /// table does not know).
    pub(crate) fn of(&self, dir: &Path) -> &ProjectDeps {
        self.by_dir.get(dir).unwrap_or(&NO_DEPS)
    }
}

/// `deps:HEX` for the dependency declarations of the root `package.json`
/// (the four dependency tables, as written), empty when it declares none.
fn root_declared(root: &Path) -> String {
    let Ok(Some(text)) = crate::paths::read_config(&root.join("package.json")) else { return String::new() };
    root_dependencies(&text)
}

/// The root's part of other projects' keys: its declarations and its
/// lockfile slice, joined.
fn root_text(declared: String, lockfile: &str) -> String {
    match (declared.is_empty(), lockfile.is_empty()) {
        (true, true) => String::new(),
        (_, true) => declared,
        (true, _) => lockfile.to_string(),
        (false, false) => format!("{declared}+{lockfile}"),
    }
}

/// The memo's input digest: the lockfile's bytes (every lockfile, when
/// several are ambiguous) and each project's manifest digest.
fn memo_input(ws: &Workspace, lockfiles: Result<&Path, Vec<&Path>>) -> Result<String, String> {
    let mut h = blake3::Hasher::new_derive_key("vx lockfile memo v1");
    let files = lockfiles.map_or_else(|many| many, |one| vec![one]);
    for path in files {
        let digest = whole_file_digest(path).map_err(|e| relative(ws, &e))?;
        h.update(path.as_os_str().as_encoded_bytes());
        h.update(digest.0.as_bytes());
    }
    for p in &ws.projects {
        h.update(&(p.rel_dir.len() as u64).to_le_bytes());
        h.update(p.rel_dir.as_bytes());
        h.update(p.package_json.as_ref().map_or(&[0u8; 32], |d| d.as_bytes()));
    }
    Ok(h.finalize().to_hex().to_string())
}

fn read_memo(path: &Path, input: &str) -> Option<Memo> {
    let memo: Memo = serde_json::from_slice(&crate::paths::read_regular(path, crate::paths::STATE_LIMIT).ok()?).ok()?;
    (memo.version == MEMO_VERSION && memo.input == input).then_some(memo)
}

/// Parses the lockfile and slices it for every project; a lockfile that
/// does not parse is hashed whole for all of them, with the notice.
fn compute(ws: &Workspace, found: Result<(LockfileKind, PathBuf), LockfileError>, state: &Path, input: String) -> Memo {
    let parsed = found.and_then(|(kind, path)| Lockfile::parse_file(&ws.root, kind, &path));
    match parsed {
        Ok(lockfile) => {
            let mut parts = BTreeMap::new();
            // The root's importer too, when it is not a project: its slice
            // is in every other project's keys.
            let root = (lockfile.has_project(".") && !ws.projects.iter().any(|p| p.rel_dir == ".")).then_some(".");
            for rel_dir in ws.projects.iter().map(|p| p.rel_dir.as_str()).chain(root) {
                let slice = lockfile.slice(rel_dir);
                let digest = lockfile.slice_digest(rel_dir);
                keep_slice(state, &digest, &slice);
                parts.insert(rel_dir.to_string(), LockPart::Slice(digest).manifest_text());
            }
            Memo { version: MEMO_VERSION, input, notice: None, parts }
        }
        Err(e) => {
            let mut h = blake3::Hasher::new_derive_key("vx lockfile whole set v1");
            for path in e.files() {
                // `memo_input` read every one of these already.
                if let Ok(d) = whole_file_digest(path) {
                    h.update(d.0.as_bytes());
                }
            }
            let whole = LockPart::Whole(DepsDigest(h.finalize())).manifest_text();
            let mut parts: BTreeMap<String, String> =
                ws.projects.iter().map(|p| (p.rel_dir.clone(), whole.clone())).collect();
            parts.insert(".".to_string(), whole.clone());
            let notice = Some(format!("{}; every task's key takes the whole lockfile instead", relative(ws, &e)));
            Memo { version: MEMO_VERSION, input, notice, parts }
        }
    }
}

/// The error's text with the workspace root taken off its paths.
fn relative(ws: &Workspace, e: &LockfileError) -> String {
    let root = format!("{}/", ws.root.display());
    e.to_string().replace(&root, "")
}

fn parse_part(text: &str) -> Option<LockPart> {
    let (tag, hex) = text.split_once(':')?;
    let digest = DepsDigest(blake3::Hash::from_hex(hex).ok()?);
    match tag {
        "slice" => Some(LockPart::Slice(digest)),
        "whole" => Some(LockPart::Whole(digest)),
        _ => None,
    }
}

fn slice_path(state: &Path, digest: &str) -> PathBuf {
    state.join("slices").join(format!("{digest}.json"))
}

/// Writes a slice's pins once per distinct slice, for `vx why`.
fn keep_slice(state: &Path, digest: &DepsDigest, slice: &[ResolvedDep]) {
    let path = slice_path(state, &digest.to_string());
    if path.exists() {
        return;
    }
    if let Ok(json) = serde_json::to_vec(slice) {
        let _ = std::fs::create_dir_all(path.parent().expect("has a parent"))
            .and_then(|()| crate::paths::write_atomic(&path, &json));
    }
}

/// The pins of a slice a manifest recorded (`slice:HEX`), if they were kept.
pub(crate) fn kept_slice(state: &Path, manifest_text: &str) -> Option<Vec<ResolvedDep>> {
    let hex = manifest_text.strip_prefix("slice:")?;
    if !crate::cache::CacheKey::is_valid(hex) {
        return None;
    }
    serde_json::from_slice(&crate::paths::read_regular(&slice_path(state, hex), crate::paths::STATE_LIMIT).ok()?).ok()
}
