//! `pnpm-lock.yaml`, lockfile 9.0 (pnpm 9 and 10): the kept `importers`,
//! the `snapshots` reachable from them, and the `packages` (resolutions)
//! of those snapshots, keyed by the snapshot's key without its peers.
//! Lockfile 6.0 (pnpm 8) is refused with a one-line error.

use std::collections::{BTreeSet, HashSet};

use serde_yaml_ng::{Mapping, Value};

use super::super::blocks::{self, Block};
use crate::lockfile::pnpm::{v9_instance_keys, without_peers};

const IMPORTER_FIELDS: [&str; 3] = ["dependencies", "devDependencies", "optionalDependencies"];

pub(super) fn prune(text: &str, kept: &BTreeSet<String>) -> Result<String, String> {
    // pnpm may put a document of its own before the lockfile: kept as it is.
    let (lead, lock) = match text.rfind("\n---\n") {
        Some(i) => text.split_at(i + 5),
        None => ("", text),
    };
    let doc: Value = serde_yaml_ng::from_str(lock).map_err(|e| e.to_string())?;
    let version = doc.get("lockfileVersion").map(scalar).unwrap_or_default();
    if !version.starts_with('9') {
        return Err(format!("lockfileVersion {version} is not pruned (pnpm 9 and later write 9.0)"));
    }
    let empty = Mapping::new();
    let map = |key: &str| doc.get(key).and_then(Value::as_mapping).unwrap_or(&empty);
    let (importers, snapshots) = (map("importers"), map("snapshots"));
    let find = |name: &str, reference: &str| -> Option<String> {
        v9_instance_keys(name, reference).into_iter().find(|k| snapshots.contains_key(k.as_str()))
    };
    let mut keep: HashSet<String> = HashSet::new();
    let mut queue: Vec<String> = Vec::new();
    for (dir, importer) in importers {
        if !kept.contains(scalar(dir).as_str()) {
            continue;
        }
        for deps in IMPORTER_FIELDS.iter().filter_map(|f| importer.get(*f).and_then(Value::as_mapping)) {
            for (name, dep) in deps {
                let reference = dep.get("version").map(scalar).unwrap_or_default();
                queue.extend(find(&scalar(name), &reference));
            }
        }
    }
    while let Some(key) = queue.pop() {
        if keep.contains(&key) {
            continue;
        }
        let snapshot = &snapshots[key.as_str()];
        for field in ["dependencies", "optionalDependencies"] {
            for (name, reference) in snapshot.get(field).and_then(Value::as_mapping).into_iter().flatten() {
                queue.extend(find(&scalar(name), &scalar(reference)));
            }
        }
        keep.insert(key);
    }
    let resolutions: HashSet<&str> = keep.iter().map(|k| without_peers(k)).collect();
    let (preamble, sections) = blocks::split(lock, 0);
    let mut out = format!("{lead}{preamble}");
    for section in sections {
        let name = section.key();
        let keeps: Box<dyn Fn(&str) -> bool> = match name.as_str() {
            "importers" => Box::new(|k: &str| kept.contains(k)),
            "packages" => Box::new(|k: &str| resolutions.contains(k)),
            "snapshots" => Box::new(|k: &str| keep.contains(k)),
            _ => {
                out.push_str(section.text);
                continue;
            }
        };
        out.push_str(&filter_section(&section, &name, keeps));
    }
    Ok(out)
}

/// The section with only the entries `keeps` names; `{}` when none is left.
fn filter_section(section: &Block<'_>, name: &str, keeps: impl Fn(&str) -> bool) -> String {
    let (preamble, entries) = blocks::split(section.body(), 2);
    let kept: Vec<&str> = entries.iter().filter(|e| keeps(&e.key())).map(|e| e.text).collect();
    if kept.is_empty() && !entries.is_empty() {
        return format!("{name}: {{}}\n\n");
    }
    format!("{}{preamble}{}", section.line, kept.concat())
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn importers_snapshots_and_packages_follow_the_kept_projects() {
        let text = "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n\n  apps/api:\n    dependencies:\n      c:\n        specifier: ^1\n        version: 1.0.0\n\n  apps/web:\n    dependencies:\n      a:\n        specifier: ^1\n        version: 1.0.0(p@1.0.0)\n\npackages:\n\n  a@1.0.0:\n    resolution: {integrity: sha512-a}\n\n  b@1.0.0:\n    resolution: {integrity: sha512-b}\n\n  c@1.0.0:\n    resolution: {integrity: sha512-c}\n\n  p@1.0.0:\n    resolution: {integrity: sha512-p}\n\nsnapshots:\n\n  a@1.0.0(p@1.0.0):\n    dependencies:\n      b: 1.0.0\n      p: 1.0.0\n\n  b@1.0.0: {}\n\n  c@1.0.0: {}\n\n  p@1.0.0: {}\n";
        let kept: BTreeSet<String> = [".", "apps/web"].map(String::from).into();
        let out = prune(text, &kept).expect("prunes");
        assert!(!out.contains("apps/api") && !out.contains("c@1.0.0"), "{out}");
        for kept in ["  a@1.0.0:\n", "  b@1.0.0:\n", "  p@1.0.0:\n", "  a@1.0.0(p@1.0.0):\n", "  b@1.0.0: {}\n"] {
            assert!(out.contains(kept), "{kept} kept\n{out}");
        }
        let v6 = "lockfileVersion: '6.0'\n";
        assert!(prune(v6, &kept).is_err());
    }
}
