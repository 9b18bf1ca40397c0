//! The workspace manifests, for yarn classic: its lockfile lists resolved
//! packages by descriptor (`lodash@^4.17.0`) but not which workspace asked
//! for them, so a project's direct dependencies come from its own
//! `package.json`, and the workspace list from the root's `workspaces`
//! globs, as yarn reads them.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde::Deserialize;

use super::error::Problem;
use super::read::read_text;

/// More workspaces than any real repository has; a glob matching more is a
/// mistake (`**` over a vendored tree) and is refused rather than walked.
const MAX_WORKSPACES: usize = 10_000;
const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// One workspace's declared dependencies.
#[derive(Debug)]
pub(crate) struct Manifest {
    /// Relative to the root, `/`-separated; `""` is the root.
    pub(crate) dir: String,
    pub(crate) name: Option<String>,
    /// `(name, range)` from dependencies, devDependencies and
    /// optionalDependencies.
    pub(crate) deps: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PackageJson {
    name: Option<String>,
    workspaces: Option<Workspaces>,
    #[serde(default)]
    dependencies: HashMap<String, String>,
    #[serde(default)]
    dev_dependencies: HashMap<String, String>,
    #[serde(default)]
    optional_dependencies: HashMap<String, String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Workspaces {
    List(Vec<String>),
    Object {
        #[serde(default)]
        packages: Vec<String>,
    },
}

/// The root's manifest and each workspace's. No root `package.json` means
/// no projects (every slice is empty).
pub(crate) fn load(root: &Path) -> Result<Vec<Manifest>, Problem> {
    let Some(top) = read_manifest(root, "")? else {
        return Ok(Vec::new());
    };
    let globs = match &top.workspaces {
        Some(Workspaces::List(globs)) | Some(Workspaces::Object { packages: globs }) => globs.as_slice(),
        None => &[],
    };
    let mut manifests = vec![manifest("", top.name, top.dependencies, top.dev_dependencies, top.optional_dependencies)];
    for dir in workspace_dirs(root, globs)? {
        if let Some(p) = read_manifest(root, &dir)? {
            manifests.push(manifest(&dir, p.name, p.dependencies, p.dev_dependencies, p.optional_dependencies));
        }
    }
    Ok(manifests)
}

fn manifest(
    dir: &str,
    name: Option<String>,
    dependencies: HashMap<String, String>,
    dev: HashMap<String, String>,
    optional: HashMap<String, String>,
) -> Manifest {
    Manifest { dir: dir.to_string(), name, deps: dependencies.into_iter().chain(dev).chain(optional).collect() }
}

fn read_manifest(root: &Path, dir: &str) -> Result<Option<PackageJson>, Problem> {
    let path = root.join(dir).join("package.json");
    if !path.is_file() {
        return Ok(None);
    }
    let shown = if dir.is_empty() { "package.json".to_string() } else { format!("{dir}/package.json") };
    let text = read_text(&path, MAX_MANIFEST_BYTES).map_err(|e| Problem::malformed(format!("{shown}: {e}")))?;
    serde_json::from_str(&text).map(Some).map_err(|e| Problem::malformed(format!("{shown}: {e}")))
}

/// The directories the `workspaces` globs match (each holding a
/// `package.json`), sorted; `!`-globs exclude, and nothing under a
/// `node_modules` counts.
fn workspace_dirs(root: &Path, globs: &[String]) -> Result<BTreeSet<String>, Problem> {
    let bad_glob = |g: &str, e: glob::PatternError| Problem::malformed(format!("workspace glob \"{g}\": {e}"));
    let mut excluded = Vec::new();
    for g in globs.iter().filter_map(|g| g.strip_prefix('!')) {
        excluded.push(glob::Pattern::new(g.trim_end_matches('/')).map_err(|e| bad_glob(g, e))?);
    }
    let base = glob::Pattern::escape(&root.to_string_lossy());
    let mut dirs = BTreeSet::new();
    for g in globs.iter().filter(|g| !g.starts_with('!')) {
        let pattern = format!("{base}/{}/package.json", g.trim_start_matches("./").trim_end_matches('/'));
        for path in glob::glob(&pattern).map_err(|e| bad_glob(g, e))?.flatten() {
            let Some(dir) = path.parent().and_then(|d| d.strip_prefix(root).ok()) else {
                continue;
            };
            let dir = dir.to_string_lossy().replace('\\', "/");
            if dir.is_empty() || dir.split('/').any(|c| c == "node_modules") || excluded.iter().any(|x| x.matches(&dir))
            {
                continue;
            }
            dirs.insert(dir);
            if dirs.len() > MAX_WORKSPACES {
                return Err(Problem::malformed(format!(
                    "the workspaces globs match more than {MAX_WORKSPACES} packages"
                )));
            }
        }
    }
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testutil::ScratchDir;

    #[test]
    fn globs_find_workspaces_and_skip_excluded_and_node_modules() {
        let ws = ScratchDir::new("workspaces");
        ws.write("package.json", r#"{"workspaces": {"packages": ["apps/*", "!apps/skip", "libs/**"]}}"#);
        ws.write("apps/web/package.json", r#"{"name": "web", "dependencies": {"a": "^1"}}"#);
        ws.write("apps/skip/package.json", "{}");
        ws.write("apps/none/README", "");
        ws.write("libs/x/node_modules/y/package.json", "{}");
        ws.write("libs/x/package.json", r#"{"devDependencies": {"b": "2"}}"#);
        let manifests = load(ws.path()).expect("loads");
        let dirs: Vec<_> = manifests.iter().map(|m| m.dir.as_str()).collect();
        assert_eq!(dirs, ["", "apps/web", "libs/x"]);
        assert_eq!(manifests[1].name.as_deref(), Some("web"));
        assert_eq!(manifests[1].deps, [("a".to_string(), "^1".to_string())]);
        assert_eq!(manifests[2].deps, [("b".to_string(), "2".to_string())]);
    }

    #[test]
    fn a_broken_workspace_manifest_names_itself() {
        let ws = ScratchDir::new("workspaces-broken");
        ws.write("package.json", r#"{"workspaces": ["apps/*"]}"#);
        ws.write("apps/web/package.json", "{");
        let err = load(ws.path()).unwrap_err();
        assert!(matches!(&err, Problem::Malformed(m) if m.starts_with("apps/web/package.json")), "{err:?}");
        let none = ScratchDir::new("workspaces-none");
        assert!(load(none.path()).expect("loads").is_empty());
    }
}
