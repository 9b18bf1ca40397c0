//! Why two keys of the same task differ: a component-by-component diff of
//! their manifests, for `vx why`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::key::KeyManifest;

/// One difference between the last run's key and the current one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `command`, `executor`, `env-mode`, `env`, `runtime`, `input`,
    /// `global-input`, `dependency`, `package.json`, `lockfile`,
    /// `root-dependencies`, `schema`.
    pub component: &'static str,
    /// `changed`, `added`, `removed`.
    pub kind: &'static str,
    /// What changed: a path, a variable name, a task id.
    pub what: String,
}

fn change(component: &'static str, kind: &'static str, what: impl Into<String>) -> Change {
    Change { component, kind, what: what.into() }
}

fn diff_pairs<V: PartialEq>(
    component: &'static str,
    old: impl IntoIterator<Item = (String, V)>,
    new: impl IntoIterator<Item = (String, V)>,
    out: &mut Vec<Change>,
) {
    let old: BTreeMap<String, V> = old.into_iter().collect();
    let new: BTreeMap<String, V> = new.into_iter().collect();
    for (name, value) in &new {
        match old.get(name) {
            None => out.push(change(component, "added", name)),
            Some(v) if v != value => out.push(change(component, "changed", name)),
            Some(_) => {}
        }
    }
    for name in old.keys().filter(|n| !new.contains_key(*n)) {
        out.push(change(component, "removed", name));
    }
}

/// Every component that differs, in key order.
pub fn diff_manifests(old: &KeyManifest, new: &KeyManifest) -> Vec<Change> {
    let mut out = Vec::new();
    if old.schema != new.schema {
        out.push(change("schema", "changed", format!("{} → {}", old.schema, new.schema)));
    }
    if old.command != new.command {
        out.push(change("command", "changed", format!("`{}` → `{}`", old.command, new.command)));
    }
    if old.executor != new.executor || old.executor_config != new.executor_config {
        out.push(change("executor", "changed", format!("{} → {}", old.executor, new.executor)));
    }
    if old.env_mode != new.env_mode && !old.env_mode.is_empty() {
        out.push(change("env-mode", "changed", format!("{} → {}", old.env_mode, new.env_mode)));
    }
    let env = |m: &KeyManifest| m.env.iter().map(|e| (e.name.clone(), (e.set, e.digest.clone()))).collect::<Vec<_>>();
    diff_pairs("env", env(old), env(new), &mut out);
    let runtime = |m: &KeyManifest| m.runtime.iter().map(|r| (r.command.clone(), r.digest.clone())).collect::<Vec<_>>();
    diff_pairs("runtime", runtime(old), runtime(new), &mut out);
    diff_pairs("input", old.files.pairs(), new.files.pairs(), &mut out);
    diff_pairs("global-input", old.global.clone(), new.global.clone(), &mut out);
    diff_pairs("dependency", old.deps.clone(), new.deps.clone(), &mut out);
    if old.package_json != new.package_json {
        out.push(change("package.json", "changed", "the project's package.json"));
    }
    if old.lockfile != new.lockfile {
        out.push(change("lockfile", "changed", "the project's slice of the lockfile"));
    }
    if old.root_deps != new.root_deps {
        out.push(change("root-dependencies", "changed", "the workspace root's dependencies or their lockfile slice"));
    }
    if old.outputs != new.outputs {
        out.push(change("outputs", "changed", format!("{:?} → {:?}", old.outputs, new.outputs)));
    }
    out
}

/// [`diff_manifests`], with a changed lockfile slice told as the packages
/// that moved (`lodash 4.17.20 → 4.17.21`), read from the slices kept in
/// `state` (`super::deps`); the plain line stays when they were not kept.
pub(crate) fn diff_explained(old: &KeyManifest, new: &KeyManifest, state: &std::path::Path) -> Vec<Change> {
    let mut out = diff_manifests(old, new);
    let Some(at) = out.iter().position(|c| c.component == "lockfile") else { return out };
    let kept = |m: &KeyManifest| super::deps::kept_slice(state, &m.lockfile);
    if let (Some(before), Some(after)) = (kept(old), kept(new)) {
        let moved: Vec<Change> = crate::lockfile::diff_slices(&before, &after)
            .into_iter()
            .map(|d| {
                let kind = match d {
                    crate::lockfile::DepChange::Added { .. } => "added",
                    crate::lockfile::DepChange::Removed { .. } => "removed",
                    _ => "changed",
                };
                change("lockfile", kind, d.to_string())
            })
            .collect();
        if !moved.is_empty() {
            out.splice(at..=at, moved);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::key::{CacheKey, EnvEntry, RuntimeEntry};

    fn digests(files: &[(&str, &str)]) -> crate::cache::key::FileDigests {
        let hashed = files.iter().map(|(path, bytes)| (path.to_string(), blake3::hash(bytes.as_bytes()))).collect();
        crate::cache::key::FileDigests(std::sync::Arc::new(hashed))
    }

    fn manifest() -> KeyManifest {
        KeyManifest {
            schema: 1,
            task: "a#b".into(),
            command: "make".into(),
            executor: "local".into(),
            executor_config: String::new(),
            env_mode: "strict".into(),
            env: vec![EnvEntry { name: "MODE".into(), set: true, digest: "aa".into() }],
            runtime: vec![RuntimeEntry { command: "node --version".into(), digest: "r1".into() }],
            files: digests(&[("src/a", "1"), ("src/b", "2")]),
            global: vec![],
            deps: vec![("x#b".into(), CacheKey("k1".into()))],
            package_json: String::new(),
            lockfile: String::new(),
            root_deps: String::new(),
            outputs: Vec::new(),
        }
    }

    #[test]
    fn names_each_changed_component() {
        let old = manifest();
        assert!(diff_manifests(&old, &old).is_empty());
        let mut new = manifest();
        new.command = "make all".into();
        new.env[0].digest = "bb".into();
        new.env_mode = "loose".into();
        new.runtime[0].digest = "r2".into();
        new.files = digests(&[("src/a", "9"), ("src/c", "3")]);
        new.deps[0].1 = CacheKey("k2".into());
        let changes = diff_manifests(&old, &new);
        let seen: Vec<(&str, &str, &str)> = changes.iter().map(|c| (c.component, c.kind, c.what.as_str())).collect();
        assert_eq!(
            seen,
            vec![
                ("command", "changed", "`make` → `make all`"),
                ("env-mode", "changed", "strict → loose"),
                ("env", "changed", "MODE"),
                ("runtime", "changed", "node --version"),
                ("input", "changed", "src/a"),
                ("input", "added", "src/c"),
                ("input", "removed", "src/b"),
                ("dependency", "changed", "x#b"),
            ]
        );
    }
}
