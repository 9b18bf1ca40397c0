//! `bun.lock`, bun's text lockfile (the default since bun 1.2): JSON with
//! trailing commas (`jsonc`).
//!
//! `workspaces` maps each workspace directory (`""` for the root) to its
//! name and declared dependencies. `packages` maps an install path to an
//! array whose first element is the resolved `name@version`; for a registry
//! package it is `[ident, registry, info, integrity]`, where `info` holds
//! the package's own dependencies. Install paths are package names joined
//! by `/`: `vxf-pad` is hoisted, `vxf-pad/@vxf/core` is nested under it, and
//! `@fx/web/vxf-pad` is nested under the workspace named `@fx/web`. A
//! dependency resolves from the most nested path outwards, as Node
//! resolves `node_modules`. A workspace's own entry is `[name@workspace:DIR]`
//! and is not external. Peer dependencies are followed (bun installs them)
//! when the lockfile resolves them.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::error::Problem;
use super::graph::{DepGraph, GraphBuilder, NodeId};
use super::yarn::descriptor_name;
use super::{Integrity, LockfileFormat, ResolvedDep, jsonc};

/// `lockfileVersion`s read: 1 (bun 1.2) and 2 (bun 1.3 and later).
const VERSIONS: std::ops::RangeInclusive<u32> = 1..=2;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BunLock {
    lockfile_version: Option<u32>,
    #[serde(default)]
    workspaces: HashMap<String, Workspace>,
    #[serde(default)]
    packages: HashMap<String, Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Workspace {
    name: Option<String>,
    #[serde(default)]
    dependencies: HashMap<String, String>,
    #[serde(default)]
    dev_dependencies: HashMap<String, String>,
    #[serde(default)]
    optional_dependencies: HashMap<String, String>,
    #[serde(default)]
    peer_dependencies: HashMap<String, String>,
}

#[derive(Clone, Copy)]
enum Target {
    Node(NodeId),
    Workspace,
}

pub(crate) fn parse(text: &str) -> Result<(LockfileFormat, DepGraph), Problem> {
    let lock: BunLock = serde_json::from_str(&jsonc::to_json(text))?;
    let version = lock.lockfile_version.ok_or_else(|| Problem::malformed("no \"lockfileVersion\""))?;
    if !VERSIONS.contains(&version) {
        return Err(Problem::unsupported(format!("lockfileVersion {version}")));
    }

    let mut graph = GraphBuilder::default();
    let mut targets: HashMap<&str, Target> = HashMap::new();
    let mut infos = Vec::new();
    for (path, entry) in &lock.packages {
        let (pin, info) = read_entry(path, entry)?;
        let target = match pin {
            Some(pin) => {
                let node = graph.add_package(pin);
                infos.push((path.as_str(), node, info));
                Target::Node(node)
            }
            None => Target::Workspace,
        };
        targets.insert(path, target);
    }
    let resolve = |from: &[&str], name: &str| -> Option<NodeId> {
        (0..=from.len()).rev().find_map(|depth| {
            let key = match depth {
                0 => name.to_string(),
                _ => format!("{}/{name}", from[..depth].join("/")),
            };
            match targets.get(key.as_str())? {
                Target::Node(node) => Some(*node),
                Target::Workspace => None,
            }
        })
    };
    for (path, from, info) in infos {
        let segments = segments(path);
        let names = ["dependencies", "optionalDependencies", "peerDependencies"]
            .into_iter()
            .filter_map(|field| info.and_then(|i| i.get(field)).and_then(Value::as_object))
            .flat_map(|deps| deps.keys());
        for name in names {
            // Resolving a package's dependency stops at the first path that
            // has it; a workspace there means the link, so nothing external.
            if let Some(to) = resolve(&segments, name) {
                graph.add_edge(from, to);
            }
        }
    }
    for (dir, ws) in &lock.workspaces {
        let from: Vec<&str> = ws.name.as_deref().into_iter().collect();
        let direct: Vec<NodeId> =
            [&ws.dependencies, &ws.dev_dependencies, &ws.optional_dependencies, &ws.peer_dependencies]
                .into_iter()
                .flat_map(HashMap::keys)
                .filter_map(|name| resolve(&from, name))
                .collect();
        graph.add_project(dir, direct);
    }
    Ok((LockfileFormat::Bun(version), graph.build()))
}

/// The pin of one `packages` entry (`None` for a workspace) and its info
/// object, if it has one.
fn read_entry<'a>(path: &str, entry: &'a [Value]) -> Result<(Option<ResolvedDep>, Option<&'a Value>), Problem> {
    let ident = entry
        .first()
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::malformed(format!("package \"{path}\" has no name@version")))?;
    let name = descriptor_name(ident);
    let spec = ident.get(name.len() + 1..).unwrap_or("");
    if spec.starts_with("workspace:") {
        return Ok((None, None));
    }
    let info = entry[1..].iter().find(|v| v.is_object());
    let registry = matches!(entry, [_, Value::String(_), Value::Object(_), Value::String(_), ..]);
    let integrity = if registry {
        Integrity::from_parts(entry[3].as_str(), Some(spec))
    } else {
        // A git, tarball or local package: what pins it is the specifier
        // and anything bun appended (a git dependency's resolved commit).
        let extra: Vec<&str> = entry[1..].iter().filter_map(Value::as_str).collect();
        let resolution = std::iter::once(spec).chain(extra).collect::<Vec<_>>().join("#");
        Integrity::from_parts(None, Some(&resolution))
    };
    let pin = ResolvedDep { name: name.to_string(), version: spec.to_string(), integrity };
    Ok((Some(pin), info))
}

/// `@fx/web/vxf-pad/@vxf/core` → [`@fx/web`, `vxf-pad`, `@vxf/core`].
pub(crate) fn segments(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let cut = if rest.starts_with('@') {
            rest.find('/').and_then(|s| rest[s + 1..].find('/').map(|t| s + 1 + t))
        } else {
            rest.find('/')
        };
        match cut {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i + 1..];
            }
            None => {
                out.push(rest);
                rest = "";
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_paths_split_into_package_names() {
        assert_eq!(segments("@fx/web/vxf-pad/@vxf/core"), ["@fx/web", "vxf-pad", "@vxf/core"]);
        assert_eq!(segments("vxf-pad"), ["vxf-pad"]);
        assert_eq!(segments("@s/x"), ["@s/x"]);
    }

    #[test]
    fn git_packages_are_pinned_by_their_resolution() {
        let text = r#"{"lockfileVersion": 1, "workspaces": {"": {"dependencies": {"g": "github:o/g"}}},
            "packages": {"g": ["g@github:o/g#abc", {}, "o-g-abc"]}}"#;
        let (_, graph) = parse(text).expect("parses");
        let slice: Vec<_> = graph.slice_pins("").cloned().collect();
        assert_eq!(slice[0].integrity, Integrity::Resolution("github:o/g#abc#o-g-abc".into()));
    }

    #[test]
    fn unknown_versions_and_nameless_entries_are_refused() {
        assert!(matches!(parse(r#"{"lockfileVersion": 9}"#), Err(Problem::Unsupported(_))));
        let nameless = r#"{"lockfileVersion": 1, "packages": {"a": [1]}}"#;
        assert!(matches!(parse(nameless), Err(Problem::Malformed(_))));
    }
}
