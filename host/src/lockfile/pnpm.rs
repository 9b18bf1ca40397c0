//! `pnpm-lock.yaml`, lockfile versions 6 (pnpm 8) and 9 (pnpm 9 and 10).
//!
//! `importers` maps each workspace directory (`.` for the root) to its
//! dependencies, each with the version pnpm resolved (`1.0.0`, with the
//! resolved peers appended as `1.0.0(react@18.2.0)`; `link:../ui` for a
//! workspace package, which is not external). The resolved version becomes
//! a key of the package graph: in v6 `packages` is keyed `/name@version`
//! and each entry carries its dependencies; in v9 `packages` is keyed
//! `name@version` (no peers) and holds the resolution, while `snapshots`
//! is keyed with the peers and holds the dependencies. A snapshot (or v6
//! entry) is one node: pnpm installs each peer variant apart, and each has
//! its own dependencies.
//!
//! Versions 5.x (pnpm 7 and older) key packages as `/name/version` and
//! shape importers differently; they are refused, and the caller hashes
//! the file whole.

use std::collections::HashMap;

use serde::Deserialize;

use super::error::Problem;
use super::graph::{DepGraph, GraphBuilder, NodeId};
use super::yaml::{Scalar, last_document};
use super::{Integrity, LockfileFormat, ResolvedDep};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PnpmLock {
    lockfile_version: Option<Scalar>,
    importers: Option<HashMap<String, Importer>>,
    // A v6 lockfile of a single-package repository has no importers: the
    // root's dependencies sit at the top level.
    #[serde(flatten)]
    root: Importer,
    #[serde(default)]
    packages: HashMap<String, Package>,
    #[serde(default)]
    snapshots: HashMap<String, Deps>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Importer {
    #[serde(default)]
    dependencies: HashMap<String, ImporterDep>,
    #[serde(default)]
    dev_dependencies: HashMap<String, ImporterDep>,
    #[serde(default)]
    optional_dependencies: HashMap<String, ImporterDep>,
}

#[derive(Deserialize)]
struct ImporterDep {
    version: Scalar,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Package {
    resolution: Option<Resolution>,
    name: Option<String>,
    version: Option<Scalar>,
    #[serde(flatten)]
    deps: Deps,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Deps {
    #[serde(default)]
    dependencies: HashMap<String, Scalar>,
    #[serde(default)]
    optional_dependencies: HashMap<String, Scalar>,
}

#[derive(Deserialize)]
struct Resolution {
    integrity: Option<String>,
    tarball: Option<String>,
    repo: Option<String>,
    commit: Option<String>,
    directory: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Version {
    V6,
    V9,
}

pub(crate) fn parse(text: &str) -> Result<(LockfileFormat, DepGraph), Problem> {
    let lock: PnpmLock = last_document(text)?;
    let declared = lock.lockfile_version.ok_or_else(|| Problem::malformed("no lockfileVersion"))?.0;
    let version = match declared.split('.').next() {
        Some("6") => Version::V6,
        Some("9") => Version::V9,
        _ => return Err(Problem::unsupported(format!("lockfileVersion {declared}"))),
    };

    let mut graph = GraphBuilder::default();
    let mut nodes: HashMap<&str, NodeId> = HashMap::new();
    let instances = match version {
        Version::V6 => lock.packages.iter().map(|(key, p)| (key, &p.deps)).collect::<Vec<_>>(),
        Version::V9 => lock.snapshots.iter().collect(),
    };
    let no_package = Package::default();
    for (key, _) in &instances {
        let pin = match version {
            Version::V6 => pin(key.strip_prefix('/').unwrap_or(key), &lock.packages[key.as_str()]),
            Version::V9 => pin(key, lock.packages.get(without_peers(key)).unwrap_or(&no_package)),
        };
        nodes.insert(key, graph.add_package(pin));
    }
    let resolve = |name: &str, reference: &str| {
        instance_keys(version, name, reference).into_iter().find_map(|key| nodes.get(key.as_str()).copied())
    };
    for (key, deps) in &instances {
        let from = nodes[key.as_str()];
        for (name, reference) in deps.dependencies.iter().chain(&deps.optional_dependencies) {
            if let Some(to) = resolve(name, &reference.0) {
                graph.add_edge(from, to);
            }
        }
    }
    let importers = match lock.importers {
        Some(importers) => importers,
        None => HashMap::from([(".".to_string(), lock.root)]),
    };
    for (dir, importer) in &importers {
        let direct = [&importer.dependencies, &importer.dev_dependencies, &importer.optional_dependencies]
            .into_iter()
            .flatten()
            .filter_map(|(name, dep)| resolve(name, &dep.version.0));
        graph.add_project(dir, direct.collect::<Vec<_>>());
    }
    let major = if version == Version::V6 { 6 } else { 9 };
    Ok((LockfileFormat::Pnpm(major), graph.build()))
}

/// The pin of an instance keyed `name@version(peers)`; the entry's own
/// `name` and `version` win (git and tarball dependencies have them).
fn pin(key: &str, package: &Package) -> ResolvedDep {
    let (name, version) = split_key(without_peers(key));
    let resolution = package.resolution.as_ref();
    let source = resolution.and_then(|r| match (&r.tarball, &r.repo, &r.commit, &r.directory) {
        (Some(tarball), ..) => Some(tarball.clone()),
        (None, Some(repo), commit, _) => Some(format!("{repo}#{}", commit.as_deref().unwrap_or(""))),
        (None, None, _, Some(directory)) => Some(directory.clone()),
        _ => None,
    });
    ResolvedDep {
        name: package.name.clone().unwrap_or_else(|| name.to_string()),
        version: package.version.as_ref().map_or_else(|| version.to_string(), |v| v.0.clone()),
        integrity: Integrity::from_parts(resolution.and_then(|r| r.integrity.as_deref()), source.as_deref()),
    }
}

/// The keys a dependency's resolved reference may name, most likely first.
/// The snapshot keys a lockfile 9 `version` may name, likeliest first
/// (`vx prune` follows them).
pub(crate) fn v9_instance_keys(name: &str, reference: &str) -> Vec<String> {
    instance_keys(Version::V9, name, reference)
}

/// pnpm writes the bare version when the instance is the dependency's own
/// name at that version, and the whole key otherwise (an alias, a git or
/// tarball dependency).
fn instance_keys(version: Version, name: &str, reference: &str) -> Vec<String> {
    if reference.starts_with("link:") {
        return Vec::new();
    }
    let plain = without_peers(reference);
    match version {
        Version::V6 if reference.starts_with('/') => vec![reference.to_string()],
        Version::V6 if plain.contains(['/', ':']) => vec![reference.to_string(), format!("/{name}@{reference}")],
        Version::V6 => vec![format!("/{name}@{reference}"), reference.to_string()],
        Version::V9 => {
            let whole = match (reference.find('@'), reference.find(':'), reference.find('(')) {
                (Some(0), ..) => true,
                (Some(at), colon, paren) => colon.is_none_or(|c| at < c) && paren.is_none_or(|p| at < p),
                (None, ..) => false,
            };
            let named = format!("{name}@{reference}");
            if whole { vec![reference.to_string(), named] } else { vec![named, reference.to_string()] }
        }
    }
}

/// `vxf-widget@1.0.0(vxf-peer@1.0.0)` → `vxf-widget@1.0.0`.
pub(crate) fn without_peers(key: &str) -> &str {
    key.find('(').map_or(key, |i| &key[..i])
}

/// `@scope/name@1.0.0` → (`@scope/name`, `1.0.0`); a key with no version
/// is all name.
fn split_key(key: &str) -> (&str, &str) {
    match key.get(1..).and_then(|rest| rest.find('@')) {
        Some(i) => (&key[..i + 1], &key[i + 2..]),
        None => (key, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_into_name_and_version() {
        assert_eq!(split_key("@vxf/core@1.0.0"), ("@vxf/core", "1.0.0"));
        assert_eq!(split_key("vxf-pad@1.0.1"), ("vxf-pad", "1.0.1"));
        assert_eq!(split_key("odd"), ("odd", ""));
        assert_eq!(without_peers("w@1.0.0(p@1.0.0)(q@2.0.0)"), "w@1.0.0");
    }

    #[test]
    fn references_name_their_instance_keys() {
        assert_eq!(instance_keys(Version::V9, "a", "1.0.0(p@1)")[0], "a@1.0.0(p@1)");
        assert_eq!(instance_keys(Version::V9, "alias", "real@1.0.0")[0], "real@1.0.0");
        assert_eq!(instance_keys(Version::V9, "alias", "@s/real@1.0.0")[0], "@s/real@1.0.0");
        assert_eq!(instance_keys(Version::V9, "t", "https://x/t.tgz")[0], "t@https://x/t.tgz");
        assert_eq!(instance_keys(Version::V6, "a", "1.0.0(p@1)")[0], "/a@1.0.0(p@1)");
        assert_eq!(instance_keys(Version::V6, "alias", "/real@1.0.0")[0], "/real@1.0.0");
        assert_eq!(instance_keys(Version::V6, "g", "github.com/o/g/abc")[0], "github.com/o/g/abc");
        assert!(instance_keys(Version::V9, "ui", "link:../ui").is_empty());
    }

    #[test]
    fn a_single_package_v6_lockfile_has_its_root_at_the_top_level() {
        let text = "lockfileVersion: '6.0'\ndependencies:\n  a:\n    specifier: ^1\n    version: 1.0.0\n\
                    packages:\n  /a@1.0.0:\n    resolution: {tarball: file:a.tgz}\n";
        let (_, graph) = parse(text).expect("parses");
        let slice: Vec<_> = graph.slice_pins("").cloned().collect();
        assert_eq!(slice.len(), 1);
        assert_eq!(slice[0].integrity, Integrity::Resolution("file:a.tgz".into()));
    }

    #[test]
    fn version_5_and_unknown_versions_are_refused() {
        for v in ["5.4", "'5.4'", "'7.0'"] {
            let text = format!("lockfileVersion: {v}\n");
            assert!(matches!(parse(&text), Err(Problem::Unsupported(_))), "{v}");
        }
        assert!(matches!(parse(""), Err(Problem::Malformed(_))));
    }

    /// Found by fuzzing (tests/fuzz/regressions/lock_pnpm): a
    /// `lockfileVersion` that YAML reads as a multi-line key was quoted
    /// whole in the error, over several lines.
    #[test]
    fn an_unreadable_version_is_a_one_line_error() {
        let text = include_str!("../../../tests/fuzz/regressions/lock_pnpm/multi-line-version");
        let err = parse(text).map(drop).unwrap_err().at(std::path::Path::new("pnpm-lock.yaml")).to_string();
        assert!(!err.contains('\n'), "{err:?}");
    }
}
