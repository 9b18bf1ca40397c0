//! The root `package.json`'s dependency declarations as one digest: the
//! part of its manifest that every other project's key takes (a tool
//! declared only at the root is run by every package's tasks). The cache
//! keys by it and `--affected` compares it at two revisions, so both read
//! it here and cannot disagree.

use std::collections::BTreeMap;

/// `deps:HEX` for the dependency declarations of a root `package.json`'s
/// `text`, as every other project's key takes them; empty when it
/// declares none (or is not a JSON object). `--affected` compares two.
pub(crate) fn root_dependencies(text: &str) -> String {
    let Ok(serde_json::Value::Object(pkg)) = serde_json::from_str::<serde_json::Value>(text) else {
        return String::new();
    };
    let tables = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"];
    let declared: BTreeMap<&str, &serde_json::Value> = tables
        .iter()
        .filter_map(|t| pkg.get(*t).filter(|v| v.as_object().is_some_and(|o| !o.is_empty())).map(|v| (*t, v)))
        .collect();
    if declared.is_empty() {
        return String::new();
    }
    let canonical = serde_json::to_vec(&declared).unwrap_or_default();
    format!("deps:{}", blake3::hash(&canonical).to_hex())
}
