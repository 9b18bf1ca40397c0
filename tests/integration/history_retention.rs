//! `[history] keep`: history keeps the last N runs (or the runs of a
//! period) and prunes older ones as runs are recorded; a `keep` that is
//! neither a duration nor a positive count is a located config error.

use serde_json::Value;

use crate::common::{TestEnv, log_cmd, project_toml};

fn env_keeping(keep: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n\n[history]\nkeep = {keep}\n"));
    env.write("packages/app/vx.toml", &project_toml("app", &[], &[("build", &log_cmd("app"), &[])]));
    env
}

#[test]
fn keeping_three_runs_leaves_the_last_three_after_five() {
    let env = env_keeping("3");
    for n in 0..5 {
        env.vx(&["run", "build", "--tag", &format!("n={n}")]).assert_success();
    }
    let out = env.vx(&["history", "--format", "json", "--limit", "100"]);
    out.assert_success();
    let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let tags: Vec<&str> = rows.iter().map(|r| r["tags"][0]["value"].as_str().unwrap_or("?")).collect();
    assert_eq!(tags, ["4", "3", "2"], "the newest three, newest first\n{out}");
    assert_eq!(env.log().len(), 5, "every run ran its task: pruning history is not the cache's business");
}

#[test]
fn a_keep_that_is_not_a_duration_or_a_count_is_a_located_error_with_a_hint() {
    for (keep, says) in [
        ("\"forever\"", "[history] keep: `forever` is not a duration"),
        ("0", "[history] keep must be a number of runs from 1"),
        ("[3]", "[history] keep is a duration or a number of runs, not `[3]`"),
    ] {
        let env = env_keeping(keep);
        let out = env.vx(&["run", "build"]);
        out.assert_code(2);
        let line = out.error_line();
        assert!(line.contains("vx.toml:5:8:") && line.contains(says), "{keep}: {out}");
        assert!(
            line.contains("keep = \\\"90d\\\"") || line.contains("keep = \"90d\""),
            "the hint shows both forms\n{out}"
        );
        assert!(env.log().is_empty(), "nothing runs after a config error");
    }
    let env = env_keeping("3");
    env.write("packages/app/vx.toml", &format!("{}\n[history]\nkeep = 3\n", project_toml("app", &[], &[])));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().contains("[history] is only allowed in the root vx.toml"), "{out}");
}
