//! `bun.lock`: the kept `workspaces`, and the `packages` entries reachable
//! from them. A package's dependency resolves from its most nested install
//! path outwards (`a/b` before `b`), a workspace's from under its name.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value};

use super::super::json_edit;
use crate::lockfile::bun::segments;
use crate::lockfile::jsonc;

const FIELDS: [&str; 4] = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"];

pub(super) fn prune(text: &str, kept: &BTreeSet<String>) -> Result<String, String> {
    let doc: Value = serde_json::from_str(&jsonc::to_json(text)).map_err(|e| e.to_string())?;
    let empty = Map::new();
    let workspaces = doc.get("workspaces").and_then(Value::as_object).unwrap_or(&empty);
    let packages = doc.get("packages").and_then(Value::as_object).unwrap_or(&empty);
    let is_kept = |dir: &str| kept.contains(if dir.is_empty() { "." } else { dir });
    let resolve = |from: &[&str], name: &str| -> Option<&str> {
        (0..=from.len()).rev().find_map(|depth| {
            let key = if depth == 0 { name.to_string() } else { format!("{}/{name}", from[..depth].join("/")) };
            packages.get_key_value(&key).map(|(k, _)| k.as_str())
        })
    };
    let mut keep: HashSet<&str> = HashSet::new();
    let mut queue: Vec<&str> = Vec::new();
    for ws in workspaces.iter().filter(|(dir, _)| is_kept(dir)).map(|(_, ws)| ws) {
        let from: Vec<&str> = ws.get("name").and_then(Value::as_str).into_iter().collect();
        let deps = FIELDS.iter().filter_map(|f| ws.get(*f).and_then(Value::as_object)).flat_map(Map::keys);
        queue.extend(deps.filter_map(|name| resolve(&from, name)));
    }
    for (key, entry) in packages {
        let ident = entry.get(0).and_then(Value::as_str).unwrap_or_default();
        if ident.split_once("@workspace:").is_some_and(|(_, dir)| is_kept(dir)) {
            queue.push(key);
        }
    }
    while let Some(key) = queue.pop() {
        if !keep.insert(key) {
            continue;
        }
        let from = segments(key);
        let info = packages[key].get(2);
        let deps = FIELDS[..]
            .iter()
            .filter(|f| **f != "devDependencies")
            .filter_map(|f| info.and_then(|i| i.get(*f)).and_then(Value::as_object))
            .flat_map(Map::keys);
        queue.extend(deps.filter_map(|name| resolve(&from, name)));
    }
    let text = json_edit::retain(text, &["workspaces"], |item, _| item.key.as_deref().is_some_and(is_kept))?;
    json_edit::retain(&text, &["packages"], |item, _| item.key.as_deref().is_some_and(|k| keep.contains(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_workspace_entries_follow_the_kept_workspaces() {
        let text = r#"{
  "lockfileVersion": 1,
  "workspaces": {
    "": {"name": "root"},
    "apps/web": {"name": "web", "dependencies": {"a": "^1", "lib": "workspace:*"}},
    "apps/api": {"name": "api", "dependencies": {"c": "^1"}},
    "libs/lib": {"name": "lib"},
  },
  "packages": {
    "a": ["a@1.0.0", "", {"dependencies": {"b": "^2"}}, "sha512-a"],

    "api": ["api@workspace:apps/api"],

    "b": ["b@1.0.0", "", {}, "sha512-b1"],

    "c": ["c@1.0.0", "", {"dependencies": {"b": "^1"}}, "sha512-c"],

    "lib": ["lib@workspace:libs/lib"],

    "web": ["web@workspace:apps/web"],

    "a/b": ["b@2.0.0", "", {}, "sha512-b2"],
  }
}"#;
        let kept: BTreeSet<String> = [".", "apps/web", "libs/lib"].map(String::from).into();
        let out = prune(text, &kept).expect("prunes");
        let doc: Value = serde_json::from_str(&jsonc::to_json(&out)).expect("still JSONC");
        let keys: Vec<&String> = doc["packages"].as_object().expect("packages").keys().collect();
        assert_eq!(keys, ["a", "a/b", "lib", "web"]);
        assert!(doc["workspaces"].get("apps/api").is_none());
        assert!(
            out.contains(
                "\"a\": [\"a@1.0.0\", \"\", {\"dependencies\": {\"b\": \"^2\"}}, \"sha512-a\"],\n\n    \"lib\""
            )
        );
    }
}
