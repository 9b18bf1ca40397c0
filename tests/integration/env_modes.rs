//! Environment modes and runtime inputs, with real processes: what a task
//! sees in strict and loose mode, which variables are in its key (`env`,
//! wildcards, `!` exclusions, `global-env`) and which only pass through
//! (`pass-env`), and runtime commands (`node --version`) whose output is
//! part of the key, each run once per invocation through the guard.

use serde_json::Value;

use crate::common::fixtures::{task, toml_str};
use crate::common::log_cmd as log;
use crate::common::process::{alive, poll};
use crate::common::{Output, TestEnv};

/// `packages/app` with one task `build` printing what `show` names, and
/// the root `vx.toml` with `root_extra` under `[workspace]`.
fn workspace(root_extra: &str, command: &str, extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{root_extra}"));
    let body = format!("[project]\nname = \"app\"\n{}", task("build", &format!("{} && {command}", log("app")), extra));
    env.write("packages/app/vx.toml", &body);
    env.write("packages/app/src/a.txt", "a");
    env
}

fn run(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.vx_command(args);
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    cmd.output()
}

/// How many times `app` really ran since the log was last cleared.
fn ran(env: &TestEnv) -> usize {
    let n = env.log().iter().filter(|l| *l == "app").count();
    env.clear_log();
    n
}

const CACHED: &str = "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]";

#[test]
fn a_strict_task_sees_the_allowlist_and_its_lists_but_no_other_variable() {
    let show = "echo \"S=${SECRET-unset} L=${LISTED-unset} P=${PASS_ME-unset} H=${HOME:+set} T=${VX_TASK}\"";
    let env = workspace("", show, "env = [\"LISTED\"]\npass-env = [\"PASS_*\"]");
    let vars = [("SECRET", "s"), ("LISTED", "l"), ("PASS_ME", "p")];
    let out = run(&env, &["run", "build"], &vars);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["S=unset L=l P=p H=set T=build"], "{out}");

    let out = run(&env, &["run", "build", "--env-mode", "loose"], &vars);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["S=s L=l P=p H=set T=build"], "{out}");

    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\nenv-mode = \"loose\"\n");
    let out = run(&env, &["run", "build"], &vars);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["S=s L=l P=p H=set T=build"], "{out}");
    let out = run(&env, &["run", "build", "--env-mode=strict"], &vars);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["S=unset L=l P=p H=set T=build"], "the flag wins\n{out}");
}

#[test]
fn node_env_production_and_development_get_different_keys_and_why_names_it() {
    let env = workspace("", "echo built", &format!("{CACHED}\nenv = [\"NODE_ENV\"]"));
    let prod = [("NODE_ENV", "production")];
    let dev = [("NODE_ENV", "development")];
    run(&env, &["run", "build"], &prod).assert_success();
    assert_eq!(ran(&env), 1);
    run(&env, &["run", "build"], &prod).assert_success();
    assert_eq!(ran(&env), 0, "same value, a hit");

    let why = run(&env, &["why", "app#build"], &dev);
    why.assert_success();
    assert!(why.stdout.contains("key changed"), "{why}");
    assert!(why.stdout.lines().any(|l| l.trim() == "env changed: NODE_ENV"), "{why}");

    let out = run(&env, &["run", "build"], &dev);
    out.assert_success();
    assert_eq!(ran(&env), 1, "development is not replayed from the production build\n{out}");
    run(&env, &["run", "build"], &prod).assert_success();
    assert_eq!(ran(&env), 0, "production's entry is still there");
}

#[test]
fn pass_env_reaches_the_task_but_not_its_key() {
    let env = workspace("", "echo \"P=$TOOL_CACHE\"", &format!("{CACHED}\npass-env = [\"TOOL_CACHE\"]"));
    let out = run(&env, &["run", "build"], &[("TOOL_CACHE", "one")]);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["P=one"], "{out}");
    assert_eq!(ran(&env), 1);
    run(&env, &["run", "build"], &[("TOOL_CACHE", "two")]).assert_success();
    assert_eq!(ran(&env), 0, "a pass-env value is not part of the key");
}

#[test]
fn env_wildcards_hash_every_match_and_exclusions_are_neither_hashed_nor_passed() {
    let show = "echo \"U=${NEXT_PUBLIC_URL-unset} S=${NEXT_PUBLIC_SECRET-unset}\"";
    let env = workspace("", show, &format!("{CACHED}\nenv = [\"NEXT_PUBLIC_*\", \"!NEXT_PUBLIC_SECRET\"]"));
    let out = run(&env, &["run", "build"], &[("NEXT_PUBLIC_URL", "a"), ("NEXT_PUBLIC_SECRET", "x")]);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["U=a S=unset"], "{out}");
    assert_eq!(ran(&env), 1);
    run(&env, &["run", "build"], &[("NEXT_PUBLIC_URL", "a"), ("NEXT_PUBLIC_SECRET", "y")]).assert_success();
    assert_eq!(ran(&env), 0, "an excluded variable is not hashed");
    run(&env, &["run", "build"], &[("NEXT_PUBLIC_URL", "b")]).assert_success();
    assert_eq!(ran(&env), 1, "a matching variable is hashed");
    let why = run(&env, &["why", "app#build"], &[("NEXT_PUBLIC_URL", "b"), ("NEXT_PUBLIC_NEW", "n")]);
    assert!(why.stdout.lines().any(|l| l.trim() == "env added: NEXT_PUBLIC_NEW"), "{why}");
}

#[test]
fn global_env_and_global_pass_env_apply_to_every_task() {
    let env = TestEnv::new();
    env.write(
        "vx.toml",
        "[workspace]\nprojects = [\"packages/*\"]\nglobal-env = [\"DEPLOY_ENV\"]\nglobal-pass-env = [\"TOOL_*\"]\n",
    );
    for name in ["a", "b"] {
        let cmd = format!("{} && echo \"D=$DEPLOY_ENV T=$TOOL_HOME\"", log(name));
        env.write(
            &format!("packages/{name}/vx.toml"),
            &format!("[project]\nname = \"{name}\"\n{}", task("build", &cmd, CACHED)),
        );
        env.write(&format!("packages/{name}/src/x.txt"), name);
    }
    let out = run(&env, &["run", "build"], &[("DEPLOY_ENV", "staging"), ("TOOL_HOME", "t")]);
    out.assert_success();
    assert_eq!(out.task_lines("a#build"), ["D=staging T=t"], "{out}");
    assert_eq!(out.task_lines("b#build"), ["D=staging T=t"], "{out}");
    env.clear_log();
    run(&env, &["run", "build"], &[("DEPLOY_ENV", "staging"), ("TOOL_HOME", "other")]).assert_success();
    assert!(env.log().is_empty(), "global-pass-env is not hashed: {:?}", env.log());
    run(&env, &["run", "build"], &[("DEPLOY_ENV", "prod")]).assert_success();
    assert_eq!(env.log_set(), ["a", "b"], "global-env is in every key");
}

#[test]
fn the_env_mode_is_part_of_the_key() {
    let env = workspace("", "echo built", CACHED);
    run(&env, &["run", "build"], &[]).assert_success();
    assert_eq!(ran(&env), 1);
    run(&env, &["run", "build", "--env-mode", "loose"], &[]).assert_success();
    assert_eq!(ran(&env), 1, "a loose task sees more than its key names, so it is keyed apart");
    let why = run(&env, &["why", "app#build"], &[]);
    assert!(why.stdout.lines().any(|l| l.trim() == "env-mode changed: loose → strict"), "{why}");
    let why = run(&env, &["why", "app#build", "--env-mode", "loose"], &[]);
    assert!(why.stdout.contains("key unchanged since its last run"), "keyed as the loose run was\n{why}");
}

#[test]
fn bad_env_settings_are_one_line_errors_with_a_hint() {
    let env = workspace("env-mode = \"lax\"\n", "true", "");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("vx.toml:3:12: unknown env-mode `lax`"), "{out}");
    assert!(line.contains("`env-mode = \"loose\"`"), "{out}");

    let env = workspace("", "true", "pass-env = [\"A=B\"]");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().contains("invalid environment variable `A=B`"), "{out}");

    let env = workspace("", "true", "runtime = [\" \"]");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().contains("empty runtime command"), "{out}");

    let out = env.vx(&["run", "build", "--env-mode", "lax"]);
    out.assert_code(2);
    assert!(out.error_line().contains("--env-mode expects strict or loose, got `lax`"), "{out}");
}

#[test]
fn a_runtime_output_is_in_the_key_shown_by_dry_and_named_by_why() {
    let env = workspace("", "echo built", &format!("{CACHED}\nruntime = [\"cat toolchain.txt\"]"));
    env.write("toolchain.txt", "v20.1.0\n");
    run(&env, &["run", "build"], &[]).assert_success();
    assert_eq!(ran(&env), 1);
    run(&env, &["run", "build"], &[]).assert_success();
    assert_eq!(ran(&env), 0, "same output, a hit");

    env.write("toolchain.txt", "v22.0.0\n");
    let dry = run(&env, &["run", "build", "--dry=json"], &[]);
    dry.assert_success();
    let plan: Value = serde_json::from_str(&dry.stdout).expect("dry json");
    let task = &plan["tasks"][0];
    assert_eq!(task["runtime"], serde_json::json!(["cat toolchain.txt"]), "{plan:#}");
    assert_eq!(task["cache_status"], "miss", "{plan:#}");
    let runtime = &task["key_components"]["runtime"];
    assert_eq!(runtime[0]["command"], "cat toolchain.txt", "{plan:#}");
    assert!(!dry.stdout.contains("v22"), "the output itself is not shown, only a digest\n{dry}");

    let why = env.vx(&["why", "app#build"]);
    why.assert_success();
    assert!(why.stdout.lines().any(|l| l.trim() == "runtime changed: cat toolchain.txt"), "{why}");
    run(&env, &["run", "build"], &[]).assert_success();
    assert_eq!(ran(&env), 1, "a moved runtime output runs the task again");
}

#[test]
fn each_runtime_command_runs_once_per_invocation() {
    let env = TestEnv::new();
    let probe = "echo probe >> \"$VX_TEST_LOG\"; echo v1";
    env.write(
        "vx.toml",
        &format!("[workspace]\nprojects = [\"packages/*\"]\nglobal-runtime = [{}]\n", toml_str(probe)),
    );
    for name in ["a", "b", "c"] {
        let extra = format!("{CACHED}\nruntime = [{}, \"echo other\"]", toml_str(probe));
        env.write(
            &format!("packages/{name}/vx.toml"),
            &format!("[project]\nname = \"{name}\"\n{}", task("build", &log(name), &extra)),
        );
        env.write(&format!("packages/{name}/src/x.txt"), name);
    }
    run(&env, &["run", "build"], &[]).assert_success();
    let probes = env.log().iter().filter(|l| *l == "probe").count();
    assert_eq!(probes, 1, "one run of the command for three tasks that list it twice: {:?}", env.log());
    env.clear_log();
    run(&env, &["run", "build"], &[]).assert_success();
    assert_eq!(env.log(), ["probe"], "a new invocation runs it again; every task is a hit");
}

#[test]
fn a_failing_runtime_command_runs_the_task_uncached_with_a_note() {
    let env = workspace("", "echo built", &format!("{CACHED}\nruntime = [\"echo oops >&2; exit 3\"]"));
    for _ in 0..2 {
        let out = env.vx(&["run", "build"]);
        out.assert_success();
        assert_eq!(ran(&env), 1, "it runs every time, uncached\n{out}");
        let notes: Vec<&str> = out.task_lines("app#build").into_iter().filter(|l| l.contains("not cached")).collect();
        assert_eq!(notes, ["not cached: runtime input `echo oops >&2; exit 3` exited with code 3: oops"], "{out}");
    }
}

#[test]
fn a_runtime_command_leaves_nothing_running() {
    let env = workspace("", "echo built", &format!("{CACHED}\nruntime = [\"sleep 300 & echo $! > bg.pid; echo v\"]"));
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let pid: i32 = env.read("bg.pid").trim().parse().expect("a pid");
    assert!(poll(|| !alive(pid)), "the probe's background process {pid} outlived it\n{out}");
}

#[test]
fn a_runtime_command_sees_the_strict_environment_of_the_workspace() {
    let probe = "echo \\\"${TOOLCHAIN-}:${SECRET-}\\\"";
    let env =
        workspace("global-pass-env = [\"TOOLCHAIN\"]\n", "echo built", &format!("{CACHED}\nruntime = [\"{probe}\"]"));
    run(&env, &["run", "build"], &[("TOOLCHAIN", "a"), ("SECRET", "x")]).assert_success();
    assert_eq!(ran(&env), 1);
    run(&env, &["run", "build"], &[("TOOLCHAIN", "a"), ("SECRET", "y")]).assert_success();
    assert_eq!(ran(&env), 0, "an unlisted variable does not reach a runtime command");
    run(&env, &["run", "build"], &[("TOOLCHAIN", "b"), ("SECRET", "y")]).assert_success();
    assert_eq!(ran(&env), 1, "a global-pass-env variable does, and its output moved");
}

#[test]
fn a_group_cannot_have_runtime_inputs() {
    let env = workspace("", "true", "");
    env.write(
        "packages/app/vx.toml",
        &format!(
            "[project]\nname = \"app\"\n{}\n[tasks.ci]\ndepends-on = [\"build\"]\nruntime = [\"node --version\"]\n",
            task("build", "true", "")
        ),
    );
    let out = env.vx(&["run", "ci"]);
    out.assert_code(2);
    assert!(out.error_line().contains("it is a group, which cannot have `runtime`"), "{out}");
}
