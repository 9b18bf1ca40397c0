//! `yarn.lock`: berry (yarn 2 and later) here, classic (yarn 1) in
//! `yarn_classic`.
//!
//! Berry's lockfile is YAML: `__metadata` (its `version`) and one entry per
//! resolved package, keyed by every descriptor that resolved to it
//! (`"lodash@npm:^4.17.0, lodash@npm:^4.17.20"`), with its `resolution`,
//! `version`, `checksum` and `dependencies` (as descriptors' ranges). The
//! workspaces are entries too, resolved as `name@workspace:DIR`; their
//! dependencies include the devDependencies. A dependency resolving to a
//! workspace is not external. Berry does not install peer dependencies (a
//! package gets its parent's), so they are not followed: the parent's own
//! dependency is already in the slice.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::error::Problem;
use super::graph::{DepGraph, GraphBuilder, NodeId};
use super::yaml::{Scalar, last_document};
use super::{Integrity, LockfileFormat, ResolvedDep, yarn_classic};

/// Lockfile `__metadata.version`s read: 4 (yarn 2) through 10 (yarn 4.x).
const BERRY_VERSIONS: std::ops::RangeInclusive<u32> = 4..=10;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    version: Option<Scalar>,
    resolution: Option<String>,
    checksum: Option<Scalar>,
    #[serde(default)]
    dependencies: HashMap<String, Scalar>,
}

/// Reads either flavour; classic needs the workspace manifests under `root`
/// because its lockfile does not list the workspaces.
pub(crate) fn parse(text: &str, root: &Path) -> Result<(LockfileFormat, DepGraph), Problem> {
    if is_berry(text) {
        parse_berry(text)
    } else if is_classic(text) {
        yarn_classic::parse(text, root)
    } else {
        Err(Problem::malformed("neither a yarn classic header (# yarn lockfile v1) nor berry __metadata"))
    }
}

/// Whether `text` is a yarn classic lockfile (its `# yarn lockfile v1`
/// header): the flavour that takes its workspaces' ranges from their
/// `package.json` files.
pub(crate) fn is_classic(text: &str) -> bool {
    text.lines().any(|l| l.trim() == "# yarn lockfile v1")
}

fn is_berry(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("__metadata:"))
}

fn parse_berry(text: &str) -> Result<(LockfileFormat, DepGraph), Problem> {
    // `__metadata` parses as an entry too: its `version` is the only field read.
    let mut entries: HashMap<String, Entry> = last_document(text)?;
    let metadata = entries.remove("__metadata").ok_or_else(|| Problem::malformed("no __metadata"))?;
    let version = metadata
        .version
        .and_then(|v| v.0.parse::<u32>().ok())
        .ok_or_else(|| Problem::malformed("__metadata has no numeric version"))?;
    if !BERRY_VERSIONS.contains(&version) {
        return Err(Problem::unsupported(format!("berry lockfile version {version}")));
    }
    let mut berry = Berry::default();
    for (key, entry) in &entries {
        berry.index(key, entry)?;
    }
    Ok((LockfileFormat::YarnBerry(version), berry.link()))
}

/// A berry lockfile being read: packages as graph nodes, every descriptor
/// that names one, and the workspaces, linked once all are indexed.
#[derive(Default)]
struct Berry<'a> {
    graph: GraphBuilder,
    by_descriptor: HashMap<String, Target>,
    workspaces: Vec<(&'a str, &'a Entry)>,
    packages: Vec<(usize, &'a Entry)>,
}

impl<'a> Berry<'a> {
    /// Indexes one entry: a package node or a workspace, under each of the
    /// descriptors its key lists.
    fn index(&mut self, key: &str, entry: &'a Entry) -> Result<(), Problem> {
        let resolution = entry
            .resolution
            .as_deref()
            .ok_or_else(|| Problem::malformed(format!("entry \"{key}\" has no resolution")))?;
        let target = match resolution.split_once("@workspace:") {
            Some((_, dir)) => {
                self.workspaces.push((dir, entry));
                Target::Workspace
            }
            None => {
                let node = self.graph.add_package(ResolvedDep {
                    name: descriptor_name(resolution).to_string(),
                    version: entry.version.clone().unwrap_or_default().0,
                    integrity: Integrity::from_parts(entry.checksum.as_ref().map(|c| c.0.as_str()), Some(resolution)),
                });
                self.packages.push((node, entry));
                Target::Node(node)
            }
        };
        for descriptor in key.split(", ") {
            self.by_descriptor.insert(descriptor.trim().to_string(), target);
            // `file:` and `portal:` descriptors are bound to the workspace
            // that wrote them: `x@file:../x.tgz::locator=web%40workspace%3Aapps%2Fweb`.
            if let Some((bare, locator)) = descriptor.trim().split_once("::locator=") {
                self.by_descriptor.insert(format!("{bare}::locator={}", percent_decode(locator)), target);
            }
        }
        Ok(())
    }

    /// What `name@range` resolves to (with or without the `npm:` protocol).
    fn lookup(&self, name: &str, range: &str) -> Option<Target> {
        self.by_descriptor
            .get(format!("{name}@{range}").as_str())
            .or_else(|| self.by_descriptor.get(format!("{name}@npm:{range}").as_str()))
            .copied()
    }

    /// The graph: each package's edges, then each workspace's direct
    /// dependencies (marked unresolved when one is missing).
    fn link(mut self) -> DepGraph {
        for (from, entry) in std::mem::take(&mut self.packages) {
            for (name, range) in &entry.dependencies {
                if let Some(Target::Node(to)) = self.lookup(name, &range.0) {
                    self.graph.add_edge(from, to);
                }
            }
        }
        for (dir, entry) in std::mem::take(&mut self.workspaces) {
            let locator = entry.resolution.as_deref().unwrap_or_default();
            let mut direct = Vec::new();
            let mut complete = true;
            for (name, range) in &entry.dependencies {
                let bound = format!("{name}@{}::locator={locator}", range.0);
                match self.lookup(name, &range.0).or_else(|| self.by_descriptor.get(&bound).copied()) {
                    Some(Target::Node(node)) => direct.push(node),
                    Some(Target::Workspace) => {}
                    None => complete = false,
                }
            }
            self.graph.add_project(dir, direct);
            if !complete {
                self.graph.mark_unresolved(dir);
            }
        }
        self.graph.build()
    }
}

/// `%40` → `@`, as yarn writes a locator into a descriptor (an invalid
/// escape is kept as it is).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = || std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex()) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Clone, Copy)]
enum Target {
    Node(NodeId),
    Workspace,
}

/// The package name of a descriptor or locator (`@scope/name@npm:1.0.0`).
pub(crate) fn descriptor_name(descriptor: &str) -> &str {
    match descriptor.get(1..).and_then(|rest| rest.find('@')) {
        Some(i) => &descriptor[..i + 1],
        None => descriptor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locators_are_percent_decoded() {
        assert_eq!(percent_decode("web%40workspace%3Aapps%2Fweb"), "web@workspace:apps/web");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn descriptor_names_keep_their_scope() {
        assert_eq!(descriptor_name("@vxf/core@npm:1.0.0"), "@vxf/core");
        assert_eq!(descriptor_name("vxf-pad@npm:1.0.1"), "vxf-pad");
        assert_eq!(descriptor_name("bare"), "bare");
    }

    #[test]
    fn unknown_berry_versions_and_headerless_files_are_refused() {
        let v = "__metadata:\n  version: 99\n  cacheKey: 10c0\n";
        assert!(matches!(parse(v, Path::new(".")), Err(Problem::Unsupported(_))));
        assert!(matches!(parse("a@1:\n  version \"1\"\n", Path::new(".")), Err(Problem::Malformed(_))));
    }

    #[test]
    fn an_entry_without_a_resolution_is_malformed() {
        let text = "__metadata:\n  version: 8\n\"a@npm:1\":\n  version: 1.0.0\n";
        assert!(matches!(parse(text, Path::new(".")), Err(Problem::Malformed(m)) if m.contains("a@npm:1")));
    }
}
