//! `--shard K/N`: the selected tasks split into N parts, each run with what
//! it depends on through the cache. Shards run one after another in one
//! workspace share its local cache, as CI shards share a remote one, so
//! across all of them every task executes exactly once.

use crate::common::{TestEnv, log_cmd, project_toml};

/// ui ← web ← site, ui ← admin, and lib, api alone; each `build` after its
/// dependencies' builds, `test` after its own build; every task cached.
fn workspace() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let projects: [(&str, &[&str]); 6] =
        [("ui", &[]), ("web", &["ui"]), ("site", &["web"]), ("admin", &["ui"]), ("lib", &[]), ("api", &[])];
    for (name, deps) in projects {
        let build = log_cmd(&format!("{name}#build"));
        let test = log_cmd(&format!("{name}#test"));
        let tasks: [(&str, &str, &[&str]); 2] = [("build", &build, &["^build"]), ("test", &test, &["build"])];
        // Cached (no inputs or outputs are declared), so that a task one
        // shard ran is a hit in the next.
        let toml = project_toml(name, deps, &tasks).replace("]\n\n[tasks.test]", "]\ncache = true\n\n[tasks.test]");
        env.write(&format!("packages/{name}/vx.toml"), &format!("{toml}cache = true\n"));
    }
    env
}

/// The ids in a `--dry=json` plan.
fn planned(env: &TestEnv, args: &[&str]) -> Vec<String> {
    let out = env.vx(args);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("the plan is JSON");
    let mut ids: Vec<String> =
        plan["tasks"].as_array().expect("tasks").iter().map(|t| t["id"].as_str().expect("an id").to_string()).collect();
    ids.sort();
    ids
}

#[test]
fn shards_together_execute_every_task_once() {
    let env = workspace();
    let mut executed = Vec::new();
    for k in 1..=3 {
        env.clear_log();
        env.vx(&["run", "build", "test", "--shard", &format!("{k}/3")]).assert_success();
        executed.extend(env.log());
    }
    executed.sort();
    let mut all: Vec<String> = ["ui", "web", "site", "admin", "lib", "api"]
        .iter()
        .flat_map(|p| [format!("{p}#build"), format!("{p}#test")])
        .collect();
    all.sort();
    assert_eq!(executed, all, "every task once across the shards, none twice");
}

#[test]
fn a_shard_holds_its_projects_whole_and_what_they_depend_on() {
    let env = workspace();
    let parts: Vec<Vec<String>> =
        (1..=2).map(|k| planned(&env, &["run", "test", "--shard", &format!("{k}/2"), "--dry=json"])).collect();
    for part in &parts {
        // site's test needs site's build, which needs web's and ui's.
        if part.contains(&"site#test".to_string()) {
            for dep in ["site#build", "web#build", "ui#build"] {
                assert!(part.contains(&dep.to_string()), "{dep} in {part:?}");
            }
        }
    }
    let tests: Vec<Vec<&String>> =
        parts.iter().map(|p| p.iter().filter(|id| id.ends_with("#test")).collect()).collect();
    assert_eq!(tests[0].len() + tests[1].len(), 6, "each test in one shard: {tests:?}");
    assert_eq!((tests[0].len(), tests[1].len()), (3, 3), "by count without history: {tests:?}");
    assert!(tests[0].iter().all(|t| !tests[1].contains(t)));
}

#[test]
fn history_weighs_the_split() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    for name in ["slow", "f1", "f2", "f3"] {
        let command = if name == "slow" { "sleep 1".to_string() } else { log_cmd(name) };
        env.write(&format!("packages/{name}/vx.toml"), &project_toml(name, &[], &[("check", &command, &[])]));
    }
    // Counts alone: two and two.
    assert_eq!(planned(&env, &["run", "check", "--shard", "1/2", "--dry=json"]).len(), 2);
    // Once every task has a p50, the slow one (1 s against a few ms) is
    // alone in its shard.
    env.vx(&["run", "check", "--no-cache"]).assert_success();
    let parts: Vec<Vec<String>> =
        (1..=2).map(|k| planned(&env, &["run", "check", "--shard", &format!("{k}/2"), "--dry=json"])).collect();
    let slow = parts.iter().find(|p| p.contains(&"slow#check".to_string())).expect("a shard has slow#check");
    assert_eq!(slow, &vec!["slow#check".to_string()], "{parts:?}");
    assert_eq!(parts.iter().map(Vec::len).sum::<usize>(), 4);
}

#[test]
fn shards_split_what_affected_selects() {
    let env = workspace();
    env.write(".gitignore", ".vx/\n");
    env.git_init("main");
    env.git_commit_all("initial");
    env.write("packages/lib/src.txt", "changed\n");
    env.write("packages/api/src.txt", "changed\n");
    let parts: Vec<Vec<String>> = (1..=2)
        .map(|k| planned(&env, &["run", "build", "--affected", "--shard", &format!("{k}/2"), "--dry=json"]))
        .collect();
    assert_eq!(parts, [vec!["api#build".to_string()], vec!["lib#build".to_string()]], "one affected build each");
}

#[test]
fn an_empty_shard_runs_nothing_and_succeeds() {
    let env = workspace();
    let out = env.vx(&["run", "lib#build", "--shard", "2/2"]);
    out.assert_success();
    assert!(out.stdout.contains("nothing to run in shard 2/2"), "{out}");
    assert!(env.log().is_empty());
}

#[test]
fn a_malformed_shard_is_a_usage_error() {
    let env = workspace();
    for bad in ["0/2", "3/2", "1/0", "one/two", "2"] {
        let out = env.vx(&["run", "build", "--shard", bad]);
        out.assert_code(2);
        assert!(out.error_line().contains("invalid --shard"), "{bad}: {out}");
        assert!(out.stderr.contains("K/N"), "the fix is named: {out}");
    }
}

/// Each task of a shard's `--dry=json` plan with its `shard` mark:
/// `(id, role, owner)`.
fn marks(env: &TestEnv, args: &[&str]) -> Vec<(String, String, Option<u64>)> {
    let out = env.vx(args);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("the plan is JSON");
    plan["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            let mark = &t["shard"];
            (
                t["id"].as_str().expect("id").into(),
                mark["role"].as_str().expect("a role").into(),
                mark["owner"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn a_shards_plan_marks_its_own_tasks_apart_from_other_shards_and_unselected_dependencies() {
    let env = workspace();
    let parts: Vec<_> =
        (1..=2).map(|k| marks(&env, &["run", "build", "--shard", &format!("{k}/2"), "--dry=json"])).collect();
    let own = |k: usize| -> Vec<&String> { parts[k].iter().filter(|m| m.1 == "own").map(|m| &m.0).collect() };
    assert_eq!(own(0).len() + own(1).len(), 6, "every build is one shard's own: {parts:?}");
    assert!(own(0).iter().all(|id| !own(1).contains(id)), "{parts:?}");
    let mut others = 0;
    for (k, part) in parts.iter().enumerate() {
        for (id, role, owner) in part {
            match role.as_str() {
                "own" => assert_eq!(*owner, Some(k as u64 + 1), "{id} in shard {}: {part:?}", k + 1),
                "other" => {
                    let owner = owner.expect("another shard owns it") as usize;
                    assert_ne!(owner, k + 1, "{id}");
                    assert!(own(owner - 1).contains(&id), "{id} is shard {owner}'s own: {parts:?}");
                    others += 1;
                }
                role => panic!("{id}: a selected build is own or other, not {role}: {part:?}"),
            }
        }
    }
    assert!(others > 0, "some shard needs a build another owns: {parts:?}");

    // `test` named alone: the builds it needs are no shard's.
    let part = marks(&env, &["run", "test", "--shard", "1/2", "--dry=json"]);
    for (id, role, owner) in &part {
        if id.ends_with("#build") {
            assert_eq!((role.as_str(), *owner), ("dependency", None), "{id}: {part:?}");
        } else {
            assert_eq!((role.as_str(), *owner), ("own", Some(1)), "{id}: {part:?}");
        }
    }
    let text = env.vx(&["run", "test", "--shard", "1/2", "--dry"]);
    text.assert_success();
    let build = text.stdout.lines().find(|l| l.contains("#build")).expect("a build is planned");
    assert!(build.ends_with("a dependency no shard selected"), "{text}");
    let plain = env.vx(&["run", "test", "--dry=json"]);
    let plain: serde_json::Value = serde_json::from_str(&plain.stdout).expect("JSON");
    assert!(plain["tasks"][0].get("shard").is_none(), "no mark without --shard");
}

#[test]
fn query_marks_a_shards_tasks_as_dry_json_does() {
    let env = workspace();
    let out = env.vx(&["query", "build", "--shard", "2/2", "--format", "json"]);
    out.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let from_query: Vec<(String, String, Option<u64>)> = doc["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().into(),
                t["shard"]["role"].as_str().unwrap().into(),
                t["shard"]["owner"].as_u64(),
            )
        })
        .collect();
    let mut from_dry = marks(&env, &["run", "build", "--shard", "2/2", "--dry=json"]);
    let mut from_query = from_query;
    from_dry.sort();
    from_query.sort();
    assert_eq!(from_query, from_dry);
}
