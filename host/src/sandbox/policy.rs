//! What a sandboxed task may read and write: the paths its declarations,
//! its toolchain and its `sandbox` table open (docs/sandbox.md, "What a
//! sandboxed task may touch").
//!
//! Globs become the directories (or files) where their literal part ends:
//! `src/**` opens `src/`, `/tsconfig.base.json` that file, `**/*.ts` the
//! whole project. The kernel checks paths beneath a directory, not
//! patterns, so a glob with a wildcard in its first part opens its whole
//! base; the cache key still counts only what the glob matches.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::config::{Network, Sandbox, Task};

/// System paths every sandboxed task may read and execute: the shell, the
/// C library and the loader, certificates and configuration in `/etc`,
/// and `/sys`, where runtimes read about the machine (node reads its
/// cgroup's memory limit). Not `/proc`: through it a task could read the
/// environment of vx and of every other process of the user, which strict
/// env mode keeps from it.
const SYSTEM_READ: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys"];
/// Written by almost every tool (`/dev/null`, the terminal).
const SYSTEM_WRITE: &[&str] = &["/dev"];

/// The paths one sandboxed attempt may read, and write, and whether it may
/// reach the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Policy {
    /// The workspace root, for naming paths in reports.
    pub root: PathBuf,
    pub reads: Vec<PathBuf>,
    pub writes: Vec<PathBuf>,
    pub network: Network,
    /// Output directories to create before the task starts, so that the
    /// ruleset can open them.
    pub make_dirs: Vec<PathBuf>,
    /// The declarations themselves, for the tracer: inside the workspace a
    /// read is judged against the globs the key uses, not the directories
    /// the ruleset opens.
    pub exact: Exact,
}

/// What the key counts, as written: the task's inputs and outputs, the
/// workspace's global inputs and each dependency's outputs; and the paths
/// read beside them (toolchain, system, manifests, `allow-read`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Exact {
    pub project: PathBuf,
    pub inputs: Option<Vec<String>>,
    pub outputs: Vec<String>,
    pub global_inputs: Vec<String>,
    pub dep_outputs: Vec<(PathBuf, Vec<String>)>,
    pub beside: Vec<PathBuf>,
}

/// Where a task's paths are resolved from.
#[derive(Debug)]
pub(crate) struct TaskPaths<'a> {
    pub root: &'a Path,
    pub project: &'a Path,
    pub task: &'a Task,
    pub sandbox: &'a Sandbox,
    /// `[workspace] global-inputs`.
    pub global_inputs: &'a [String],
    /// Each dependency's outputs: the directory and its globs.
    pub dep_outputs: Vec<(PathBuf, Vec<String>)>,
    /// The task's `PATH`, and the programs it starts by name.
    pub path_var: Option<&'a OsStr>,
    pub programs: Vec<std::ffi::OsString>,
    pub home: Option<PathBuf>,
}

impl Policy {
    pub(crate) fn for_task(t: &TaskPaths<'_>) -> Policy {
        let mut beside: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
        for program in &t.programs {
            beside.extend(toolchain(t.path_var, program));
        }
        // The manifests the key takes (docs/cache.md), which package
        // managers and runtimes read too.
        beside.push(t.project.join("package.json"));
        let lockfiles = crate::lockfile::LOCKFILE_NAMES.iter().map(|(name, _)| *name);
        beside.extend(["package.json", "pnpm-workspace.yaml"].into_iter().chain(lockfiles).map(|f| t.root.join(f)));
        beside.extend(t.sandbox.allow_read.iter().map(|p| resolve(p, t.root, t.project, t.home.as_deref())));
        let mut reads = beside.clone();
        match &t.task.inputs {
            None => reads.push(t.project.to_path_buf()),
            Some(globs) => reads.extend(globs.iter().filter_map(|g| glob_base(g, t.root, t.project))),
        }
        reads.extend(t.global_inputs.iter().filter_map(|g| glob_base(&format!("/{g}"), t.root, t.root)));
        for (dir, globs) in &t.dep_outputs {
            reads.extend(globs.iter().filter_map(|g| glob_base(g, dir, dir)));
        }
        let mut writes: Vec<PathBuf> = SYSTEM_WRITE.iter().map(PathBuf::from).collect();
        let make_dirs: Vec<PathBuf> = t.task.outputs.iter().filter_map(|g| output_dir(g, t.root, t.project)).collect();
        writes.extend(make_dirs.iter().cloned());
        writes.extend(t.sandbox.allow_write.iter().map(|p| resolve(p, t.root, t.project, t.home.as_deref())));
        reads.sort();
        reads.dedup();
        writes.sort();
        writes.dedup();
        let exact = Exact {
            project: t.project.to_path_buf(),
            inputs: t.task.inputs.clone(),
            outputs: t.task.outputs.clone(),
            global_inputs: t.global_inputs.to_vec(),
            dep_outputs: t.dep_outputs.clone(),
            beside,
        };
        Policy { root: t.root.to_path_buf(), reads, writes, network: t.sandbox.network, make_dirs, exact }
    }
}

/// The directory an output glob writes beneath: its literal base, or for
/// an output that names one file (no wildcard: `tsconfig.tsbuildinfo`),
/// the directory that holds it, since a new file is made in its directory.
fn output_dir(glob: &str, root: &Path, dir: &Path) -> Option<PathBuf> {
    let base = glob_base(glob, root, dir)?;
    if glob.contains(['*', '?', '[', '{']) { Some(base) } else { base.parent().map(Path::to_path_buf) }
}

/// Where `glob` stops being literal, as a path: under the root for `/x`,
/// else under `dir`. A negation opens nothing.
fn glob_base(glob: &str, root: &Path, dir: &Path) -> Option<PathBuf> {
    if glob.starts_with('!') {
        return None;
    }
    let (base, rel) = match glob.strip_prefix('/') {
        Some(rel) => (root, rel),
        None => (dir, glob),
    };
    let literal: Vec<&str> = rel.split('/').take_while(|part| !part.contains(['*', '?', '[', '{'])).collect();
    Some(literal.iter().fold(base.to_path_buf(), |p, part| if part.is_empty() { p } else { p.join(part) }))
}

/// An `allow-read`/`allow-write` entry as a path: `~/x` under the home
/// directory; `/x` under the workspace root when the root has an `x`, else
/// the machine's `/x`; anything else under the project.
pub(crate) fn resolve(path: &str, root: &Path, project: &Path, home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(home)) = (path.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    if let Some(rel) = path.strip_prefix('/') {
        let in_root = root.join(rel);
        return if in_root.symlink_metadata().is_ok() { in_root } else { PathBuf::from(path) };
    }
    project.join(path)
}

/// The directories of the task's `PATH` (the binaries it may start, and
/// `node_modules/.bin`), and the prefix of the program it starts (the
/// directory above its `bin/`, where a toolchain keeps its libraries:
/// `~/.nvm/versions/node/v20` for its `node`).
fn toolchain(path_var: Option<&OsStr>, program: &OsStr) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = path_var.map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
    let found = if Path::new(program).components().count() > 1 {
        Some(PathBuf::from(program))
    } else {
        dirs.iter().map(|d| d.join(program)).find(|p| p.is_file())
    };
    let mut out = dirs.clone();
    if let Some(real) = found.and_then(|p| std::fs::canonicalize(p).ok()) {
        let prefix = real.parent().and_then(Path::parent).map(Path::to_path_buf);
        out.extend(prefix.filter(|p| p.parent().is_some()));
        out.push(real);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_open_where_their_literal_part_ends() {
        let (root, project) = (Path::new("/ws"), Path::new("/ws/p"));
        let base = |g: &str| glob_base(g, root, project);
        assert_eq!(base("src/**"), Some(PathBuf::from("/ws/p/src")));
        assert_eq!(base("src/a/*.ts"), Some(PathBuf::from("/ws/p/src/a")));
        assert_eq!(base("**/*.ts"), Some(PathBuf::from("/ws/p")));
        assert_eq!(base("/tsconfig.base.json"), Some(PathBuf::from("/ws/tsconfig.base.json")));
        assert_eq!(base("/gen/web/**"), Some(PathBuf::from("/ws/gen/web")));
        assert_eq!(base("!src/skip/**"), None);
        assert_eq!(output_dir("dist/**", root, project), Some(PathBuf::from("/ws/p/dist")));
        assert_eq!(output_dir("out/app.js", root, project), Some(PathBuf::from("/ws/p/out")), "a file: its dir");
    }

    #[test]
    fn allow_entries_resolve_against_home_root_or_project() {
        let dir = std::env::temp_dir().join(format!("vx-policy-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("node_modules")).unwrap();
        let home = Path::new("/home/u");
        let r = |p: &str| resolve(p, &dir, &dir.join("p"), Some(home));
        assert_eq!(r("~/.cache/x"), home.join(".cache/x"));
        assert_eq!(r("/node_modules"), dir.join("node_modules"), "the root has one");
        assert_eq!(r("/etc/ssl/certs"), PathBuf::from("/etc/ssl/certs"), "the root has none: the machine's");
        assert_eq!(r("gen"), dir.join("p/gen"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
