//! yarn berry's `yarn.lock`: the workspaces kept, the entries reachable
//! from them, and in each entry's key only the descriptors something kept
//! still asks for. `yarn install --immutable` regenerates the lockfile and
//! compares: a descriptor only a pruned workspace used would be missing
//! from the regenerated key, and the comparison would fail.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_yaml_ng::{Mapping, Value};

use super::super::blocks;
use crate::lockfile::yarn::percent_decode;

pub(super) fn prune(text: &str, kept: &BTreeSet<String>) -> Result<String, String> {
    let doc: Mapping = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    // Descriptor (as looked up) → (entry key, descriptor as written in the key).
    let mut by_descriptor: HashMap<String, (&str, &str)> = HashMap::new();
    let mut entries: HashMap<&str, &Value> = HashMap::new();
    for (key, entry) in &doc {
        let Some(key) = key.as_str().filter(|k| *k != "__metadata") else { continue };
        entries.insert(key, entry);
        for descriptor in key.split(", ").map(str::trim) {
            by_descriptor.insert(descriptor.to_string(), (key, descriptor));
            if let Some((bare, locator)) = descriptor.split_once("::locator=") {
                by_descriptor.insert(format!("{bare}::locator={}", percent_decode(locator)), (key, descriptor));
            }
        }
    }
    let resolution = |entry: &Value| entry.get("resolution").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut used: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut queue: Vec<&str> = Vec::new();
    for (key, entry) in &entries {
        let res = resolution(entry);
        if res.split_once("@workspace:").is_some_and(|(_, dir)| kept.contains(dir)) {
            queue.push(key);
            // A workspace's own descriptor is always in its key.
            if let Some(own) = key.split(", ").map(str::trim).find(|d| *d == res) {
                used.entry(key).or_default().insert(own);
            }
        }
    }
    let mut seen: HashSet<&str> = HashSet::new();
    while let Some(key) = queue.pop() {
        if !seen.insert(key) {
            continue;
        }
        let entry = entries[key];
        let res = resolution(entry);
        let mut wanted: Vec<String> = Vec::new();
        for (name, range) in entry.get("dependencies").and_then(Value::as_mapping).into_iter().flatten() {
            let (Some(name), Some(range)) = (name.as_str(), range.as_str()) else { continue };
            wanted.push(format!("{name}@{range}"));
            wanted.push(format!("{name}@npm:{range}"));
            wanted.push(format!("{name}@{range}::locator={res}"));
        }
        // A patched package needs the entry of what it patches.
        if let Some((_, patched)) = res.split_once("@patch:") {
            wanted.push(percent_decode(patched.split('#').next().unwrap_or_default()));
        }
        for descriptor in &wanted {
            if let Some(&(target, written)) = by_descriptor.get(descriptor.as_str()) {
                used.entry(target).or_default().insert(written);
                queue.push(target);
            }
        }
    }
    let (preamble, blocks) = blocks::split(text, 0);
    let mut out = preamble.to_string();
    for block in blocks {
        let key = block.key();
        if key == "__metadata" {
            out.push_str(block.text);
            continue;
        }
        let Some(descriptors) = used.get(key.as_str()) else { continue };
        let all: Vec<&str> = key.split(", ").map(str::trim).collect();
        if all.iter().all(|d| descriptors.contains(d)) {
            out.push_str(block.text);
            continue;
        }
        let joined = all.iter().filter(|d| descriptors.contains(*d)).copied().collect::<Vec<_>>().join(", ");
        let line = if block.line.starts_with('"') { format!("\"{joined}\":") } else { format!("{joined}:") };
        out.push_str(&line);
        out.push_str(block.body());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_only_pruned_workspaces_used_leave_the_keys() {
        let text = "# header\n\n__metadata:\n  version: 8\n  cacheKey: 10c0\n\n\"a@npm:^1.0.0, a@npm:^1.1.0\":\n  version: 1.1.0\n  resolution: \"a@npm:1.1.0\"\n  languageName: node\n  linkType: hard\n\n\"api@workspace:apps/api\":\n  version: 0.0.0-use.local\n  resolution: \"api@workspace:apps/api\"\n  dependencies:\n    a: \"npm:^1.1.0\"\n    c: \"npm:^1.0.0\"\n  languageName: unknown\n  linkType: soft\n\n\"c@npm:^1.0.0\":\n  version: 1.0.0\n  resolution: \"c@npm:1.0.0\"\n  languageName: node\n  linkType: hard\n\n\"web@workspace:apps/web\":\n  version: 0.0.0-use.local\n  resolution: \"web@workspace:apps/web\"\n  dependencies:\n    a: \"npm:^1.0.0\"\n  languageName: unknown\n  linkType: soft\n";
        let kept: BTreeSet<String> = [".", "apps/web"].map(String::from).into();
        let out = prune(text, &kept).expect("prunes");
        assert!(out.starts_with("# header\n\n__metadata:\n  version: 8\n"), "{out}");
        assert!(out.contains("\n\"a@npm:^1.0.0\":\n  version: 1.1.0\n"), "{out}");
        assert!(!out.contains("api@") && !out.contains("c@npm"), "{out}");
        assert!(out.ends_with("\"web@workspace:apps/web\":\n  version: 0.0.0-use.local\n  resolution: \"web@workspace:apps/web\"\n  dependencies:\n    a: \"npm:^1.0.0\"\n  languageName: unknown\n  linkType: soft\n"));
    }
}
