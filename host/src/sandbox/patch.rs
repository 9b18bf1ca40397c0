//! `--verify=inputs`: what a traced task touched outside its declarations,
//! as the lines to add to its `vx.toml`. Paths are spelled as `vx.toml`
//! takes them (project-relative inside the project, `/x` elsewhere in the
//! workspace, `~/x` at home), and three or more files of one directory
//! become that directory's glob (`src/gen/**`), so a task that reads a
//! thousand files gets a short patch. A listed directory of the workspace
//! becomes the glob of its entries (`src/*`): the key then counts its
//! names, and the sandbox opens it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Touch, Violation};

/// Files of one directory from which it is suggested whole.
const GLOB_FROM: usize = 3;

/// One task's suggested additions.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Patch {
    /// For `inputs`: read inside the workspace, not declared.
    pub inputs: Vec<String>,
    /// For `outputs`: written inside the workspace, not declared.
    pub outputs: Vec<String>,
    /// Outside the workspace: not in any key; `sandbox.allow-read` and
    /// `allow-write` when the task is sandboxed.
    pub outside_reads: Vec<String>,
    pub outside_writes: Vec<String>,
}

impl Patch {
    pub(crate) fn is_empty(&self) -> bool {
        self.inputs.is_empty()
            && self.outputs.is_empty()
            && self.outside_reads.is_empty()
            && self.outside_writes.is_empty()
    }
}

/// The patch for `violations` of a task in `project` of the workspace at
/// `root`.
pub(crate) fn patch(violations: &[Violation], project: &Path, root: &Path, home: Option<&Path>) -> Patch {
    let (mut inside_r, mut inside_w, mut outside_r, mut outside_w) = (vec![], vec![], vec![], vec![]);
    for v in violations {
        let (spelled, inside) = spell(&v.path, project, root, home);
        match (inside, v.touch) {
            (true, Touch::Read) => inside_r.push(spelled),
            (true, Touch::List) => inside_r.push(entries(&spelled)),
            (true, Touch::Write) => inside_w.push(spelled),
            (false, Touch::Read | Touch::List) => outside_r.push(spelled),
            (false, Touch::Write) => outside_w.push(spelled),
        }
    }
    Patch {
        inputs: grouped(inside_r),
        outputs: grouped(inside_w),
        outside_reads: grouped(outside_r),
        outside_writes: grouped(outside_w),
    }
}

/// `path` as `vx.toml` takes it (project-relative inside the project, `/x`
/// elsewhere in the workspace, `~/x` at home), and whether it is inside
/// the workspace.
pub(crate) fn spell(path: &Path, project: &Path, root: &Path, home: Option<&Path>) -> (String, bool) {
    if let Ok(rel) = path.strip_prefix(project) {
        (rel.display().to_string(), true)
    } else if let Ok(rel) = path.strip_prefix(root) {
        (format!("/{}", rel.display()), true)
    } else if let Some(rel) = home.and_then(|h| path.strip_prefix(h).ok()) {
        (format!("~/{}", rel.display()), false)
    } else {
        (path.display().to_string(), false)
    }
}

/// The glob of a listed directory's entries, as `spelled` in `vx.toml`.
pub(crate) fn entries(spelled: &str) -> String {
    match spelled {
        "" => "*".to_string(),
        "/" => "/*".to_string(),
        dir => format!("{dir}/*"),
    }
}

/// Paths, with every directory of `GLOB_FROM` or more of them as its glob,
/// and nothing left that a kept glob (or a path beneath it) covers. The top of the project or of
/// the workspace is never globbed whole.
fn grouped(paths: Vec<String>) -> Vec<String> {
    let all: BTreeSet<String> = paths.into_iter().collect();
    // A directory made on the way to a file (`mkdir -p cache`) goes with
    // the file.
    let paths: BTreeSet<String> =
        all.iter().filter(|p| !all.iter().any(|q| q.starts_with(&format!("{p}/")))).cloned().collect();
    let mut by_dir: BTreeMap<String, usize> = BTreeMap::new();
    for p in &paths {
        if let Some((dir, _)) = p.rsplit_once('/')
            && !dir.is_empty()
            && dir != "~"
        {
            *by_dir.entry(dir.to_string()).or_default() += 1;
        }
    }
    let globs: Vec<String> = by_dir.into_iter().filter(|(_, n)| *n >= GLOB_FROM).map(|(d, _)| d).collect();
    // Only the outermost globbed directories.
    let outer: Vec<&String> =
        globs.iter().filter(|d| !globs.iter().any(|o| o != *d && d.starts_with(&format!("{o}/")))).collect();
    let covered = |p: &str| outer.iter().any(|d| p.starts_with(&format!("{d}/")));
    let mut out: Vec<String> = outer.iter().map(|d| format!("{d}/**")).collect();
    out.extend(paths.iter().filter(|p| !covered(p)).cloned());
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn read(p: &str) -> Violation {
        Violation { touch: Touch::Read, path: PathBuf::from(p) }
    }

    #[test]
    fn paths_are_spelled_for_vx_toml_and_grouped_by_directory() {
        let v = vec![
            read("/ws/p/build.js"),
            read("/ws/p/gen/a.ts"),
            read("/ws/p/gen/b.ts"),
            read("/ws/p/gen/deep/c.ts"),
            read("/ws/p/gen/d.ts"),
            read("/ws/shared/config.json"),
            read("/home/u/.npmrc"),
            Violation { touch: Touch::Write, path: PathBuf::from("/ws/p/cache") },
            Violation { touch: Touch::Write, path: PathBuf::from("/ws/p/cache/x") },
            Violation { touch: Touch::Write, path: PathBuf::from("/tmp/scratch") },
        ];
        let p = patch(&v, Path::new("/ws/p"), Path::new("/ws"), Some(Path::new("/home/u")));
        assert_eq!(p.inputs, ["/shared/config.json", "build.js", "gen/**"]);
        assert_eq!(p.outputs, ["cache/x"]);
        assert_eq!(p.outside_reads, ["~/.npmrc"]);
        assert_eq!(p.outside_writes, ["/tmp/scratch"]);
    }

    #[test]
    fn the_top_of_a_project_is_not_globbed_and_nested_globs_fold() {
        let files = ["a.js", "b.js", "c.js", "x/1", "x/2", "x/3", "x/y/1", "x/y/2", "x/y/3"];
        let v: Vec<Violation> = files.iter().map(|f| read(&format!("/ws/p/{f}"))).collect();
        let p = patch(&v, Path::new("/ws/p"), Path::new("/ws"), None);
        assert_eq!(p.inputs, ["a.js", "b.js", "c.js", "x/**"]);
    }

    #[test]
    fn a_listed_directory_becomes_the_glob_of_its_entries() {
        let list = |p: &str| Violation { touch: Touch::List, path: PathBuf::from(p) };
        let v = vec![list("/ws/p"), list("/ws/p/src"), list("/ws"), list("/ws/shared"), list("/opt/sdk")];
        let p = patch(&v, Path::new("/ws/p"), Path::new("/ws"), None);
        assert_eq!(p.inputs, ["*", "/*", "/shared/*", "src/*"]);
        assert_eq!(p.outside_reads, ["/opt/sdk"]);
    }
}
