//! What moved between two slices of one project, for `vx why`.
//!
//! Changes are grouped by package name. A name whose only change is one
//! version leaving and one arriving has *moved* (`lodash 4.17.20 →
//! 4.17.21`); any other difference in its versions is reported as versions
//! added and removed. A version present on both sides with a different
//! integrity is *repinned* (same version, different content: a republished
//! tarball, a git dependency at another commit).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::{Integrity, ResolvedDep};

/// One line of a slice diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DepChange {
    Moved { name: String, from: String, to: String },
    Added { name: String, version: String },
    Removed { name: String, version: String },
    Repinned { name: String, version: String },
}

impl fmt::Display for DepChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Moved { name, from, to } => write!(f, "{name} {from} → {to}"),
            Self::Added { name, version } => write!(f, "{name} {version} added"),
            Self::Removed { name, version } => write!(f, "{name} {version} removed"),
            Self::Repinned { name, version } => write!(f, "{name} {version} integrity changed"),
        }
    }
}

type Versions<'a> = BTreeMap<&'a str, BTreeSet<&'a Integrity>>;

/// The changes from `old` to `new`, sorted by package name; empty when the
/// slices hold the same pins.
pub(crate) fn diff_slices(old: &[ResolvedDep], new: &[ResolvedDep]) -> Vec<DepChange> {
    let (old, new) = (by_name(old), by_name(new));
    let names: BTreeSet<&str> = old.keys().chain(new.keys()).copied().collect();
    let empty = Versions::new();
    let mut changes = Vec::new();
    for name in names {
        let before = old.get(name).unwrap_or(&empty);
        let after = new.get(name).unwrap_or(&empty);
        let gone: Vec<&str> = before.keys().filter(|v| !after.contains_key(*v)).copied().collect();
        let came: Vec<&str> = after.keys().filter(|v| !before.contains_key(*v)).copied().collect();
        let owned = |v: &str| (name.to_string(), v.to_string());
        if let ([from], [to]) = (gone.as_slice(), came.as_slice()) {
            changes.push(DepChange::Moved { name: name.to_string(), from: from.to_string(), to: to.to_string() });
        } else {
            for v in &gone {
                let (name, version) = owned(v);
                changes.push(DepChange::Removed { name, version });
            }
            for v in &came {
                let (name, version) = owned(v);
                changes.push(DepChange::Added { name, version });
            }
        }
        for (version, pins) in before {
            if after.get(version).is_some_and(|other| other != pins) {
                let (name, version) = owned(version);
                changes.push(DepChange::Repinned { name, version });
            }
        }
    }
    changes
}

fn by_name(deps: &[ResolvedDep]) -> BTreeMap<&str, Versions<'_>> {
    let mut map: BTreeMap<&str, Versions<'_>> = BTreeMap::new();
    for dep in deps {
        map.entry(&dep.name).or_default().entry(&dep.version).or_default().insert(&dep.integrity);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dep(name: &str, version: &str, hash: &str) -> ResolvedDep {
        ResolvedDep { name: name.into(), version: version.into(), integrity: Integrity::Hash(hash.into()) }
    }

    fn lines(old: &[ResolvedDep], new: &[ResolvedDep]) -> Vec<String> {
        diff_slices(old, new).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn one_version_for_another_is_a_move() {
        let old = [dep("lodash", "4.17.20", "a"), dep("react", "18.0.0", "r")];
        let new = [dep("lodash", "4.17.21", "b"), dep("react", "18.0.0", "r")];
        assert_eq!(lines(&old, &new), ["lodash 4.17.20 → 4.17.21"]);
        assert_eq!(
            diff_slices(&old, &new),
            [DepChange::Moved { name: "lodash".into(), from: "4.17.20".into(), to: "4.17.21".into() }]
        );
        assert!(diff_slices(&old, &old).is_empty());
    }

    #[test]
    fn other_differences_are_additions_removals_and_repins() {
        let old = [dep("core", "1.0.0", "a"), dep("core", "2.0.0", "b"), dep("gone", "1.0.0", "g")];
        let new = [dep("core", "3.0.0", "c"), dep("new", "1.0.0", "n"), dep("gone", "1.0.0", "h")];
        assert_eq!(
            lines(&old, &new),
            [
                "core 1.0.0 removed",
                "core 2.0.0 removed",
                "core 3.0.0 added",
                "gone 1.0.0 integrity changed",
                "new 1.0.0 added",
            ]
        );
    }
}
