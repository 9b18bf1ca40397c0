//! `package-lock.json` (v2, v3): the `packages` entries reachable from the
//! kept workspaces and the root, resolved as Node resolves (the
//! dependent's own `node_modules`, then each ancestor's), plus the
//! `node_modules/NAME` link of every kept workspace, which npm lays out for
//! each workspace whether or not anything depends on it.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value};

use super::super::json_edit;
use super::super::root::keeps_pattern;

pub(super) fn prune(text: &str, kept: &BTreeSet<String>) -> Result<String, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Some(packages) = doc.get("packages").and_then(Value::as_object) else {
        return Err("no \"packages\" map (lockfileVersion 1 is not pruned; npm 7 and later write v2 or v3)".into());
    };
    let is_kept = |dir: &str| kept.contains(if dir.is_empty() { "." } else { dir });
    let mut keep: HashSet<&str> = HashSet::new();
    let mut queue: Vec<&str> = Vec::new();
    for (path, entry) in packages {
        let link_to_kept = is_link(entry) && entry.get("resolved").and_then(Value::as_str).is_some_and(is_kept);
        if (!is_installed(path) && is_kept(path)) || link_to_kept {
            queue.push(path);
        }
    }
    while let Some(path) = queue.pop() {
        if !keep.insert(path) {
            continue;
        }
        let entry = &packages[path];
        if is_link(entry) {
            if let Some((target, _)) =
                entry.get("resolved").and_then(Value::as_str).and_then(|t| packages.get_key_value(t))
            {
                queue.push(target);
            }
            continue;
        }
        let dev = (!is_installed(path)).then_some("devDependencies");
        let fields = ["dependencies", "optionalDependencies", "peerDependencies"].into_iter().chain(dev);
        for name in fields.filter_map(|f| entry.get(f).and_then(Value::as_object)).flat_map(Map::keys) {
            if let Some(found) = resolve(packages, path, name) {
                queue.push(found);
            }
        }
    }
    let text = json_edit::retain(text, &["packages"], |item, _| item.key.as_deref().is_some_and(|k| keep.contains(k)))?;
    json_edit::retain(&text, &["packages", "", "workspaces"], |item, t| {
        serde_json::from_str::<String>(item.value(t)).map_or(true, |p| keeps_pattern(&p, kept))
    })
}

fn is_link(entry: &Value) -> bool {
    entry.get("link").and_then(Value::as_bool).unwrap_or(false)
}

/// The `packages` key that `name` resolves to from the entry at `from`.
fn resolve<'p>(packages: &'p Map<String, Value>, from: &str, name: &str) -> Option<&'p str> {
    let mut base = from;
    loop {
        if !base.ends_with("node_modules") {
            let candidate =
                if base.is_empty() { format!("node_modules/{name}") } else { format!("{base}/node_modules/{name}") };
            if let Some((key, _)) = packages.get_key_value(&candidate) {
                return Some(key);
            }
        }
        if base.is_empty() {
            return None;
        }
        base = base.rsplit_once('/').map_or("", |(parent, _)| parent);
    }
}

fn is_installed(path: &str) -> bool {
    path.starts_with("node_modules/") || path.contains("/node_modules/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_pruned_workspaces_go_and_shared_ones_stay() {
        let text = r#"{
  "lockfileVersion": 3,
  "packages": {
    "": {"workspaces": ["apps/*", "libs/gone"]},
    "apps/web": {"dependencies": {"a": "^1"}},
    "apps/web/node_modules/b": {"version": "2.0.0"},
    "apps/api": {"dependencies": {"b": "^1", "web": "*"}},
    "node_modules/a": {"version": "1.0.0", "dependencies": {"b": "^1"}},
    "node_modules/api": {"resolved": "apps/api", "link": true},
    "node_modules/b": {"version": "1.0.0"},
    "node_modules/c": {"version": "1.0.0"},
    "node_modules/web": {"resolved": "apps/web", "link": true}
  }
}"#;
        let kept: BTreeSet<String> = [".".to_string(), "apps/web".to_string()].into();
        let out = prune(text, &kept).expect("prunes");
        let doc: Value = serde_json::from_str(&out).expect("still JSON");
        let keys: Vec<&String> = doc["packages"].as_object().expect("packages").keys().collect();
        assert_eq!(keys, ["", "apps/web", "node_modules/a", "node_modules/b", "node_modules/web"]);
        assert_eq!(doc["packages"][""]["workspaces"], serde_json::json!(["apps/*"]));
    }
}
