//! Reading run summary documents (`--summarize`'s, the dashboard's) in
//! tests: checked against the schema the docs publish, and a task found
//! by its id.

use std::path::Path;

use serde_json::Value;

/// Validates `doc` against `docs/schema/run-summary.v1.json`.
pub(crate) fn assert_valid(doc: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema/run-summary.v1.json");
    let text = std::fs::read_to_string(&path).expect("the schema file");
    let schema: Value = serde_json::from_str(&text).expect("the schema file is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the document breaks its schema:\n{}\n{doc:#}", errors.join("\n"));
}

/// The task `id` of a summary document.
pub(crate) fn task<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["tasks"].as_array().unwrap().iter().find(|t| t["id"] == id).unwrap_or_else(|| panic!("no {id} in {doc:#}"))
}
