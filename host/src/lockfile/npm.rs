//! `package-lock.json` (and `npm-shrinkwrap.json`), lockfile versions 2 and 3.
//!
//! Both versions carry the `packages` map that npm 7 introduced: one entry
//! per directory npm lays out, keyed by its path (`node_modules/a`,
//! `node_modules/a/node_modules/b`, `apps/web/node_modules/c`), with `""`
//! for the root and a workspace's directory (`apps/web`) for each
//! workspace. A dependency resolves the way Node resolves it: from the
//! dependent's own `node_modules`, then each ancestor's. Entries with
//! `link: true` are workspace (or `file:` directory) links, so never
//! external. Version 1 (npm 6) has only the nested `dependencies` tree and
//! no workspaces; it is refused, and the caller hashes the file whole.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::error::Problem;
use super::graph::{DepGraph, GraphBuilder, NodeId};
use super::{Integrity, LockfileFormat, ResolvedDep};

// Strings borrow from the text where they can (most have no escapes), and
// dependency ranges are skipped unread: resolution needs only the names.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PackageLock<'a> {
    lockfile_version: Option<u32>,
    #[serde(borrow)]
    packages: Option<HashMap<Cow<'a, str>, Entry<'a>>>,
}

/// The keys of a dependency map, in file order, its ranges skipped.
#[derive(Default)]
struct Names<'a>(Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Names<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Keys<'a> {
            type Value = Names<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of dependency names to ranges")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Names<'a>, M::Error> {
                let mut names = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(CowKey(name)) = map.next_key()? {
                    map.next_value::<IgnoredAny>()?;
                    names.push(name);
                }
                Ok(Names(names))
            }
        }
        d.deserialize_map(Keys(std::marker::PhantomData))
    }
}

/// A map key that borrows from the text unless it has escapes.
struct CowKey<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for CowKey<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
        Borrowed::deserialize(d).map(|b| CowKey(b.0))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    resolved: Option<Cow<'a, str>>,
    #[serde(borrow)]
    integrity: Option<Cow<'a, str>>,
    #[serde(default)]
    link: bool,
    #[serde(default, borrow)]
    dependencies: Names<'a>,
    #[serde(default, borrow)]
    dev_dependencies: Names<'a>,
    #[serde(default, borrow)]
    optional_dependencies: Names<'a>,
    #[serde(default, borrow)]
    peer_dependencies: Names<'a>,
}

pub(crate) fn parse(text: &str) -> Result<(LockfileFormat, DepGraph), Problem> {
    let lock: PackageLock = serde_json::from_str(text)?;
    let version = lock.lockfile_version.ok_or_else(|| Problem::malformed("no \"lockfileVersion\""))?;
    let packages = match (version, lock.packages) {
        (2 | 3, Some(packages)) => packages,
        (2 | 3, None) => return Err(Problem::malformed("no \"packages\" map")),
        (1, _) => return Err(Problem::unsupported("lockfileVersion 1 (written by npm 6)")),
        (v, _) => return Err(Problem::unsupported(format!("lockfileVersion {v}"))),
    };

    let mut graph = GraphBuilder::default();
    let mut nodes: HashMap<&str, NodeId> = HashMap::new();
    for (path, entry) in &packages {
        if is_installed(path) && !entry.link {
            let pin = ResolvedDep {
                name: entry.name.as_deref().unwrap_or_else(|| installed_name(path)).to_string(),
                version: entry.version.as_deref().unwrap_or_default().to_string(),
                integrity: Integrity::from_parts(entry.integrity.as_deref(), entry.resolved.as_deref()),
            };
            nodes.insert(path, graph.add_package(pin));
        }
    }
    // One buffer for every candidate path: formatting a fresh string per
    // ancestor was a quarter of the parse.
    let mut candidate = String::new();
    let mut resolve = |from: &str, name: &str| -> Option<NodeId> {
        let mut base = from;
        loop {
            if !base.ends_with("node_modules") {
                candidate.clear();
                if !base.is_empty() {
                    candidate.push_str(base);
                    candidate.push('/');
                }
                candidate.push_str("node_modules/");
                candidate.push_str(name);
                if let Some(entry) = packages.get(candidate.as_str()) {
                    // A link is the workspace itself: not external, and its
                    // own dependencies are its own slice.
                    return if entry.link { None } else { nodes.get(candidate.as_str()).copied() };
                }
            }
            if base.is_empty() {
                return None;
            }
            base = base.rsplit_once('/').map_or("", |(parent, _)| parent);
        }
    };
    for (path, entry) in &packages {
        if entry.link {
            continue;
        }
        let project = !is_installed(path);
        // devDependencies are installed for the root and workspaces only.
        let dev = project.then_some(&entry.dev_dependencies);
        let names = [&entry.dependencies, &entry.optional_dependencies, &entry.peer_dependencies]
            .into_iter()
            .chain(dev)
            .flat_map(|names| &names.0);
        let targets: Vec<NodeId> = names.filter_map(|name| resolve(path, name)).collect();
        if project {
            graph.add_project(path, targets);
        } else {
            let from = nodes[path.as_ref()];
            for to in targets {
                graph.add_edge(from, to);
            }
        }
    }
    Ok((LockfileFormat::Npm(version), graph.build()))
}

/// Whether a `packages` key is an installed package rather than the root or
/// a workspace (or a linked directory's own entry).
fn is_installed(path: &str) -> bool {
    path.starts_with("node_modules/") || path.contains("/node_modules/")
}

/// The name a package is installed under: the path after its last
/// `node_modules/` (`@scope/name` for a scoped package).
fn installed_name(path: &str) -> &str {
    path.rsplit_once("node_modules/").map_or(path, |(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, dir: &str) -> Vec<String> {
        let (_, graph) = parse(text).expect("parses");
        graph.slice_pins(dir).map(ToString::to_string).collect()
    }

    #[test]
    fn nested_copies_shadow_hoisted_ones_and_aliases_keep_their_real_name() {
        let text = r#"{"lockfileVersion": 3, "packages": {
            "": {"dependencies": {"a": "^1", "alias": "npm:real@^2"}},
            "node_modules/a": {"version": "1.0.0", "dependencies": {"b": "^2"}},
            "node_modules/b": {"version": "1.0.0"},
            "node_modules/a/node_modules/b": {"version": "2.0.0"},
            "node_modules/alias": {"name": "real", "version": "2.0.0"}
        }}"#;
        assert_eq!(slice(text, ""), ["a 1.0.0", "b 2.0.0", "real 2.0.0"]);
    }

    #[test]
    fn devdependencies_of_installed_packages_are_not_followed() {
        let text = r#"{"lockfileVersion": 2, "packages": {
            "": {"devDependencies": {"a": "1"}},
            "node_modules/a": {"version": "1.0.0", "devDependencies": {"b": "1"}},
            "node_modules/b": {"version": "1.0.0"}
        }}"#;
        assert_eq!(slice(text, ""), ["a 1.0.0"]);
    }

    #[test]
    fn old_and_unknown_versions_are_refused() {
        let v1 = r#"{"lockfileVersion": 1, "dependencies": {}}"#;
        assert!(matches!(parse(v1), Err(Problem::Unsupported(w)) if w.contains("npm 6")));
        assert!(matches!(parse(r#"{"lockfileVersion": 4}"#), Err(Problem::Unsupported(_))));
        assert!(matches!(parse(r#"{"packages": {}}"#), Err(Problem::Malformed(_))));
        assert!(matches!(parse(r#"{"lockfileVersion": 3}"#), Err(Problem::Malformed(_))));
    }
}
