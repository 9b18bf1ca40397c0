//! `vx query build --affected --format json` read back, for the tests of
//! `--affected`'s reasons and of its lockfile slices.

use serde_json::Value;

use super::TestEnv;

/// Each planned `build` with its reasons (empty for a dependency the plan
/// pulls in), sorted by id.
#[track_caller]
pub(crate) fn query_affected_builds(env: &TestEnv) -> Vec<(String, Vec<Value>)> {
    let out = env.vx(&["query", "build", "--affected", "--format", "json"]);
    out.assert_success();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e})\n{out}"));
    let mut tasks: Vec<(String, Vec<Value>)> = doc["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| (t["id"].as_str().expect("an id").to_string(), t["reasons"].as_array().expect("reasons").clone()))
        .collect();
    tasks.sort_by(|a, b| a.0.cmp(&b.0));
    tasks
}
