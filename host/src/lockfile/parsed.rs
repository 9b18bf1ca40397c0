//! [`Lockfile`]: one lockfile read into the dependency graph, whatever
//! its format, and what keys ask of it: each project's slice and its
//! digest.

use std::fmt;
use std::path::{Path, PathBuf};

use super::graph::DepGraph;
use super::read::{self, MAX_LOCKFILE_BYTES};
use super::{DepsDigest, LockfileError, LockfileKind, ResolvedDep, bun, find_lockfile, npm, pnpm, yarn};

/// A parsed workspace lockfile.
#[derive(Debug)]
pub struct Lockfile {
    path: PathBuf,
    format: LockfileFormat,
    graph: DepGraph,
    /// The digest of the file's text, for the slices of projects with a
    /// dependency the file does not resolve.
    text_digest: blake3::Hash,
}

/// The format and version a lockfile was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockfileFormat {
    /// `package-lock.json` / `npm-shrinkwrap.json`, `lockfileVersion` 2 or 3.
    Npm(u32),
    /// `pnpm-lock.yaml`, lockfile major version 6 or 9.
    Pnpm(u32),
    /// yarn 1's `yarn.lock` (`# yarn lockfile v1`).
    YarnClassic,
    /// yarn 2+'s `yarn.lock`, by `__metadata.version`.
    YarnBerry(u32),
    /// bun's text `bun.lock`, by `lockfileVersion`.
    Bun(u32),
}

impl fmt::Display for LockfileFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Npm(v) => write!(f, "package-lock.json v{v}"),
            Self::Pnpm(v) => write!(f, "pnpm-lock.yaml v{v}"),
            Self::YarnClassic => f.write_str("yarn.lock v1 (classic)"),
            Self::YarnBerry(v) => write!(f, "yarn.lock v{v} (berry)"),
            Self::Bun(v) => write!(f, "bun.lock v{v}"),
        }
    }
}

impl Lockfile {
    /// Finds the lockfile in use at the workspace `root` and reads it.
    /// `Ok(None)`: the workspace has no lockfile.
    pub fn find_and_parse(root: &Path) -> Result<Option<Self>, LockfileError> {
        match find_lockfile(root)? {
            Some((kind, path)) => Self::parse_file(root, kind, &path).map(Some),
            None => Ok(None),
        }
    }

    /// Reads one lockfile of `kind` at `path`; `root` is the workspace root
    /// (yarn classic reads the workspace manifests under it).
    pub fn parse_file(root: &Path, kind: LockfileKind, path: &Path) -> Result<Self, LockfileError> {
        if path.extension().is_some_and(|e| e == "lockb") {
            return Err(LockfileError::Unsupported {
                path: path.to_path_buf(),
                what: "the binary bun.lockb (bun 1.2 and later write the text bun.lock)".to_string(),
            });
        }
        let text = read::read_text(path, MAX_LOCKFILE_BYTES)?;
        Self::parse_text(root, kind, path, &text)
    }

    /// Reads the `text` of a lockfile of `kind`, named `path` in errors:
    /// a version that is not on disk (`--affected` reads the base
    /// revision's from git). Yarn classic resolves through the workspace
    /// manifests under `root` as they are now.
    pub fn parse_text(root: &Path, kind: LockfileKind, path: &Path, text: &str) -> Result<Self, LockfileError> {
        let parsed = match kind {
            LockfileKind::Npm => npm::parse(text),
            LockfileKind::Pnpm => pnpm::parse(text),
            LockfileKind::Yarn => yarn::parse(text, root),
            LockfileKind::Bun => bun::parse(text),
        };
        let (format, graph) = parsed.map_err(|p| p.at(path))?;
        let text_digest = blake3::hash(text.as_bytes());
        Ok(Self { path: path.to_path_buf(), format, graph, text_digest })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn format(&self) -> LockfileFormat {
        self.format
    }

    /// The external dependencies of the project at `project_rel_dir`
    /// (relative to the workspace root, `/`-separated, `""` or `.` for the
    /// root), transitively, sorted and deduplicated. Empty for a directory
    /// the lockfile does not know as a workspace.
    pub fn slice(&self, project_rel_dir: &str) -> Vec<ResolvedDep> {
        self.graph.slice_pins(project_rel_dir).cloned().collect()
    }

    /// `slice_digest(&self.slice(dir))`, without copying the slice, and
    /// computed once per project however often it is asked for. For a
    /// project with a dependency the lockfile does not resolve
    /// ([`Lockfile::is_complete`]), the whole file's text joins it: vx
    /// cannot tell what that dependency pins, so any change counts.
    pub fn slice_digest(&self, project_rel_dir: &str) -> DepsDigest {
        let digest = self.graph.slice_digest(project_rel_dir);
        if self.graph.is_complete(project_rel_dir) {
            return digest;
        }
        let mut h = blake3::Hasher::new_derive_key("vx lockfile incomplete slice v1");
        h.update(digest.0.as_bytes());
        h.update(self.text_digest.as_bytes());
        DepsDigest(h.finalize())
    }

    /// Whether every dependency of the project's manifest resolved to a
    /// lockfile entry.
    pub fn is_complete(&self, project_rel_dir: &str) -> bool {
        self.graph.is_complete(project_rel_dir)
    }

    /// Whether the lockfile knows `project_rel_dir` as the root or a
    /// workspace (an unknown one has an empty slice).
    pub fn has_project(&self, project_rel_dir: &str) -> bool {
        self.graph.has_project(project_rel_dir)
    }

    /// The project directories the lockfile knows, in no particular order.
    pub fn projects(&self) -> impl Iterator<Item = &str> {
        self.graph.projects()
    }
}
