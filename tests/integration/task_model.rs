//! The task model's key material and selection, with real files and
//! processes: lockfiles written by the real package managers (the fixtures
//! of `host/src/lockfile/fixtures`), `package.json` in normal form,
//! root-anchored inputs and outputs, outputs removed before a run, arguments after
//! `--`, and `--affected` by inputs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::fixtures::task;
use crate::common::log_cmd as log;
use crate::common::{Checked, TestEnv};

#[track_caller]
fn ok(env: &TestEnv, args: &[&str]) -> Checked {
    env.vx(args).checked_success()
}

/// Which tasks really ran in one `vx ARGS`, sorted.
#[track_caller]
fn ran(env: &TestEnv, args: &[&str]) -> Vec<String> {
    env.clear_log();
    ok(env, args);
    env.log_set()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src/lockfile/fixtures")
}

/// Copies the files of `from` into the workspace, over what is there.
fn copy_tree(env: &TestEnv, from: &Path) {
    for entry in walk(from) {
        let rel = entry.strip_prefix(from).expect("inside");
        env.write(&rel.to_string_lossy(), &std::fs::read_to_string(&entry).expect("read a fixture"));
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read a fixture dir") {
        let path = entry.expect("an entry").path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

/// A fixture workspace (`FORMAT/before`), with a cached `build` in each
/// of its three projects that logs the project's directory name.
fn lockfile_workspace(format: &str) -> TestEnv {
    let env = TestEnv::new();
    copy_tree(&env, &fixtures().join(format).join("before"));
    env.write("vx.toml", "[workspace]\nprojects = [\"apps/*\", \"packages/*\"]\n");
    for dir in ["apps/web", "apps/api", "packages/ui"] {
        let name = dir.rsplit('/').next().expect("a name");
        env.write(&format!("{dir}/src/index.js"), name);
        env.write(&format!("{dir}/vx.toml"), &task("build", &log(name), "inputs = [\"src/**\"]\n"));
    }
    env
}

/// The dependency that moved is named by `vx why`, and only the project
/// whose slice moved runs again, for every lockfile format.
fn upgrade_reruns_only_the_project_whose_slice_moved(format: &str) {
    let env = lockfile_workspace(format);
    assert_eq!(ran(&env, &["run", "build"]), ["api", "ui", "web"], "{format}: a cold run");
    assert!(ran(&env, &["run", "build"]).is_empty(), "{format}: everything cached");

    // Only the lockfile: web's pins moved, api's and ui's did not.
    let lockfile = walk(&fixtures().join(format).join("after"))
        .into_iter()
        .find(|p| !p.ends_with("package.json"))
        .expect("a lockfile");
    let name = lockfile.file_name().expect("a name").to_string_lossy().into_owned();
    env.write(&name, &std::fs::read_to_string(&lockfile).expect("read"));
    if format == "yarn1" {
        // yarn classic's lockfile maps specifiers to versions, and web's
        // `vxf-pad@1.0.0` still resolves to 1.0.0 (api keeps that entry):
        // its slice moves only with its package.json.
        assert!(ran(&env, &["run", "build"]).is_empty(), "{format}: no slice moved");
    } else {
        let why = ok(&env, &["why", "@fx/web#build"]);
        assert!(why.stdout.contains("lockfile changed: vxf-pad 1.0.0 → 1.0.1"), "{format}: names the move\n{why}");
        assert_eq!(ran(&env, &["run", "build"]), ["web"], "{format}: only web's slice moved");
    }

    // Then web's package.json too, as the upgrade wrote it.
    copy_tree(&env, &fixtures().join(format).join("after"));
    let why = ok(&env, &["why", "@fx/web#build"]);
    assert!(why.stdout.contains("package.json changed"), "{format}: names the manifest\n{why}");
    if format == "yarn1" {
        assert!(why.stdout.contains("lockfile changed: vxf-pad 1.0.0 → 1.0.1"), "{format}: names the move\n{why}");
    }
    assert_eq!(ran(&env, &["run", "build"]), ["web"], "{format}");
    assert!(ran(&env, &["run", "build"]).is_empty(), "{format}: cached again");
}

#[test]
fn npm_lockfile_upgrade_invalidates_only_its_project() {
    upgrade_reruns_only_the_project_whose_slice_moved("npm");
}

#[test]
fn pnpm6_lockfile_upgrade_invalidates_only_its_project() {
    upgrade_reruns_only_the_project_whose_slice_moved("pnpm6");
}

#[test]
fn pnpm9_lockfile_upgrade_invalidates_only_its_project() {
    upgrade_reruns_only_the_project_whose_slice_moved("pnpm9");
}

#[test]
fn yarn_classic_lockfile_upgrade_invalidates_only_its_project() {
    upgrade_reruns_only_the_project_whose_slice_moved("yarn1");
}

#[test]
fn yarn_berry_lockfile_upgrade_invalidates_only_its_project() {
    upgrade_reruns_only_the_project_whose_slice_moved("berry");
}

#[test]
fn bun_lockfile_upgrade_invalidates_only_its_project() {
    upgrade_reruns_only_the_project_whose_slice_moved("bun");
    upgrade_reruns_only_the_project_whose_slice_moved("bun12");
}

#[test]
fn a_lockfile_vx_cannot_read_is_hashed_whole_with_one_notice() {
    let env = lockfile_workspace("npm");
    env.write("package-lock.json", "{ \"lockfileVersion\": 3, \"packages\": ");
    let first = ok(&env, &["run", "build"]);
    let notices: Vec<&str> = first.stderr.lines().filter(|l| l.contains("package-lock.json")).collect();
    assert_eq!(notices.len(), 1, "one notice\n{first}");
    assert!(notices[0].contains("whole lockfile"), "says what vx does instead\n{first}");
    assert!(!notices[0].contains(&env.root().display().to_string()), "no machine path\n{first}");
    assert!(ran(&env, &["run", "build"]).is_empty(), "a whole-file key is still a key");
    env.write("package-lock.json", "{ \"lockfileVersion\": 3, \"packages\": [");
    assert_eq!(ran(&env, &["run", "build"]), ["api", "ui", "web"], "any change to it reruns every project");
}

#[test]
fn package_json_is_keyed_in_normal_form() {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"app\"]\n");
    env.write(
        "app/package.json",
        "{\n  \"name\": \"app\",\n  \"version\": \"1.0.0\",\n  \"browserslist\": [\"chrome 120\"]\n}\n",
    );
    env.write("app/vx.toml", &task("build", &log("app"), "inputs = [\"src/**\"]\n"));
    env.write("app/src/a.js", "a");
    assert_eq!(ran(&env, &["run", "build"]), ["app"]);
    env.write("app/package.json", "{\"browserslist\":[\"chrome 120\"],\"version\":\"1.0.0\",\"name\":\"app\"}");
    assert!(ran(&env, &["run", "build"]).is_empty(), "key order and formatting do not count");
    env.write("app/package.json", "{\"browserslist\":[\"chrome 100\"],\"version\":\"1.0.0\",\"name\":\"app\"}");
    assert_eq!(ran(&env, &["run", "build"]), ["app"], "any field does, though no input glob names the file");
}

/// Two projects; `web`'s build reads the root `tsconfig.base.json`.
fn anchored_workspace() -> TestEnv {
    let env = TestEnv::new();
    env.git_init("main");
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\n");
    env.write("tsconfig.base.json", "{}");
    env.write("README.md", "root");
    env.write(
        "packages/web/vx.toml",
        &task("build", &log("web"), "inputs = [\"src/**\", \"/tsconfig.base.json\"]\noutputs = [\"dist/**\"]\n"),
    );
    env.write("packages/api/vx.toml", &task("build", &log("api"), "inputs = [\"src/**\"]\n"));
    for p in ["web", "api"] {
        env.write(&format!("packages/{p}/src/index.ts"), p);
        env.write(&format!("packages/{p}/README.md"), p);
    }
    env.git_commit_all("start");
    env
}

#[test]
fn a_root_anchored_input_is_part_of_the_key_and_of_why() {
    let env = anchored_workspace();
    assert_eq!(ran(&env, &["run", "build"]), ["api", "web"]);
    let dry = ok(&env, &["run", "web#build", "--dry=json"]);
    let plan: Value = serde_json::from_str(&dry.stdout).expect("JSON");
    assert_eq!(plan["tasks"][0]["key_components"]["files"], 2, "src/index.ts and the root file\n{dry}");
    env.write("tsconfig.base.json", "{ \"strict\": true }");
    let why = ok(&env, &["why", "web#build"]);
    assert!(why.stdout.contains("input changed: tsconfig.base.json"), "{why}");
    assert_eq!(ran(&env, &["run", "build"]), ["web"], "api does not take it");
}

#[test]
fn a_root_anchored_input_may_not_leave_the_workspace_or_name_a_machine_path() {
    let env = anchored_workspace();
    env.write("packages/api/vx.toml", &task("build", "true", "inputs = [\"/../secret\"]\n"));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().contains("`/../secret` in `inputs` leaves the workspace"), "{out}");
    let machine = format!("{}/tsconfig.base.json", env.root().display());
    env.write("packages/api/vx.toml", &task("build", "true", &format!("inputs = [\"{machine}\"]\n")));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().contains("is a path of this machine"), "{out}");
    assert!(out.stderr.contains("write `/tsconfig.base.json`"), "says how to mend it\n{out}");
}

#[test]
fn affected_selects_tasks_by_their_inputs() {
    let env = anchored_workspace();
    env.git_branch("feature");
    env.write("packages/api/README.md", "edited");
    let out = ok(&env, &["run", "build", "--affected"]);
    assert!(env.log().is_empty(), "a README no task takes affects nothing\n{out}");
    assert!(out.stdout.contains("nothing affected since main"), "{out}");
    env.write("tsconfig.base.json", "{ \"strict\": true }");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["web"], "a root-anchored input");
    env.write("packages/api/src/index.ts", "changed");
    assert_eq!(affected_ids(&env), ["api#build", "web#build"], "both changes count (web's is a cache hit by now)");
}

#[test]
fn outputs_are_removed_before_the_task_runs_so_no_stale_file_is_cached() {
    let env = anchored_workspace();
    env.write("packages/web/dist/stale.js", "left by an older build");
    let build = format!("{} && mkdir -p dist && echo new > dist/app.js", log("web"));
    env.write("packages/web/vx.toml", &task("build", &build, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n"));
    ok(&env, &["run", "web#build"]);
    let dist = env.root().join("packages/web/dist");
    assert!(!dist.join("stale.js").exists(), "the stale output is gone");
    assert!(dist.join("app.js").exists());
    // Restored from the cache, the outputs are exactly the entry's.
    env.write("packages/web/dist/stale.js", "again");
    std::fs::remove_file(dist.join("app.js")).expect("remove");
    assert!(ran(&env, &["run", "web#build"]).is_empty(), "a hit");
    assert!(!dist.join("stale.js").exists(), "a restore leaves no stale file");
    assert_eq!(env.read("packages/web/dist/app.js"), "new\n");
}

/// `api`'s build generates the workspace's `gen/api/client.ts` (a
/// root-anchored output) and reads `gen/shared/**`; `web`'s reads what it made.
fn generated_workspace() -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\n");
    let gen_api = format!("{} && mkdir -p ../../gen/api && cat src/index.ts > ../../gen/api/client.ts", log("api"));
    env.write(
        "packages/api/vx.toml",
        &task("build", &gen_api, "inputs = [\"src/**\", \"/gen/shared/**\"]\noutputs = [\"/gen/api/**\"]\n"),
    );
    env.write(
        "packages/web/vx.toml",
        &task("build", &log("web"), "inputs = [\"src/**\", \"/gen/api/**\"]\ndepends-on = [\"api#build\"]\n"),
    );
    for p in ["web", "api"] {
        env.write(&format!("packages/{p}/src/index.ts"), p);
    }
    env.write("gen/shared/types.ts", "shared");
    env
}

#[test]
fn a_root_anchored_output_is_cleared_cached_and_restored_at_the_root() {
    let env = generated_workspace();
    env.write("gen/api/stale.ts", "left by an older build");
    assert_eq!(ran(&env, &["run", "build"]), ["api", "web"]);
    assert!(!env.root().join("gen/api/stale.ts").exists(), "cleared before the task ran");
    assert_eq!(env.read("gen/api/client.ts"), "api");
    assert_eq!(env.read("gen/shared/types.ts"), "shared", "not an output");
    std::fs::remove_dir_all(env.root().join("gen/api")).expect("remove gen/api");
    assert!(ran(&env, &["run", "build"]).is_empty(), "both hit");
    assert_eq!(env.read("gen/api/client.ts"), "api", "restored under the workspace root");
    assert!(!env.root().join("packages/api/.vx-root").exists(), "nothing restored into the project");
    // With inputs that take all of `gen/`, its own output is still not
    // its input: a hand edit there leaves api's key as it was.
    let toml = env.read("packages/api/vx.toml").replace("/gen/shared/**", "/gen/**");
    env.write("packages/api/vx.toml", &toml);
    let run = ran(&env, &["run", "build"]);
    assert!(run.is_empty(), "the same input files, since gen/api/ is its output: {run:?}");
    env.write("gen/api/client.ts", "edited by hand");
    let dry = ok(&env, &["run", "build", "--dry=json"]);
    let plan: Value = serde_json::from_str(&dry.stdout).expect("JSON");
    let status = |id: &str| {
        plan["tasks"].as_array().expect("tasks").iter().find(|t| t["id"] == id).expect("planned")["cache_status"]
            .clone()
    };
    assert_eq!(status("api#build"), "hit-local", "an output of api is not its input\n{dry}");
    assert_eq!(status("web#build"), "miss", "but it is web's\n{dry}");
    let run = ran(&env, &["run", "build"]);
    assert!(run.is_empty(), "api hits and puts its output back before web is keyed: {run:?}");
    assert_eq!(env.read("gen/api/client.ts"), "api");
}

#[test]
fn a_project_file_under_the_reserved_name_is_not_cached_with_root_outputs() {
    let env = generated_workspace();
    let build = format!("{} && mkdir -p .vx-root ../../gen/api && echo x > .vx-root/x", log("api"));
    env.write("packages/api/vx.toml", &task("build", &build, "outputs = [\".vx-root/**\", \"/gen/api/**\"]\n"));
    let out = ok(&env, &["run", "api#build"]);
    assert!(out.stdout.contains("not cached") && out.stdout.contains("`.vx-root/`"), "{out}");
    assert_eq!(ran(&env, &["run", "api#build"]), ["api"], "nothing was stored");
}

#[test]
fn arguments_after_dashes_reach_only_the_named_tasks_and_their_keys() {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\n");
    env.write(
        "packages/app/vx.toml",
        &[
            task("gen", &log("gen"), "inputs = [\"src/**\"]\n"),
            task(
                "test",
                "sh -c 'echo \"args:$*\" >> ../../args.txt' --",
                "inputs = [\"src/**\"]\ndepends-on = [\"gen\"]\n",
            ),
        ]
        .concat(),
    );
    env.write("packages/app/src/a.ts", "a");
    ok(&env, &["run", "test", "--", "--coverage", "a b"]);
    assert_eq!(env.read("args.txt"), "args:--coverage a b\n", "appended, each a word");
    assert_eq!(env.log(), ["gen"], "the dependency ran, without them");
    let dry = ok(&env, &["run", "test", "--dry=json", "--", "--coverage", "a b"]);
    let plan: Value = serde_json::from_str(&dry.stdout).expect("JSON");
    let commands: Vec<String> = plan["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["command"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(commands.iter().any(|c| c.ends_with("-- --coverage 'a b'")), "shown by --dry\n{commands:?}");
    assert!(commands.iter().any(|c| c == &log("gen")), "not added to the dependency\n{commands:?}");
    let test = plan["tasks"].as_array().expect("tasks").iter().find(|t| t["id"] == "app#test").expect("app#test");
    assert_eq!(test["cache_status"], "hit-local", "same arguments, same key\n{dry}");
    let other = ok(&env, &["run", "test", "--dry=json", "--", "--watch"]);
    assert!(other.stdout.contains("\"cache_status\": \"miss\""), "other arguments, another key\n{other}");
    let last = ok(&env, &["last"]);
    assert!(last.stdout.contains("-- --coverage 'a b'"), "recorded by vx last\n{last}");
}

#[test]
fn an_uncached_task_with_outputs_has_them_cleared_too() {
    let env = anchored_workspace();
    env.write("packages/api/dist/stale.js", "left by an older build");
    let build = format!("{} && mkdir -p dist && echo new > dist/app.js", log("api"));
    env.write("packages/api/vx.toml", &task("build", &build, "outputs = [\"dist/**\"]\ncache = false\n"));
    ok(&env, &["run", "api#build"]);
    assert!(!env.root().join("packages/api/dist/stale.js").exists(), "outputs hold only what this run made");
    assert_eq!(env.read("packages/api/dist/app.js"), "new\n");
}

/// The `--affected` ids that `--dry=json` plans.
fn affected_ids(env: &TestEnv) -> Vec<String> {
    let dry = ok(env, &["run", "build", "--affected", "--dry=json"]);
    let plan: Value = serde_json::from_str(&dry.stdout).expect("JSON");
    plan["tasks"].as_array().expect("tasks").iter().map(|t| t["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn affected_counts_a_projects_own_config_the_root_config_and_the_lockfile() {
    let env = anchored_workspace();
    env.write("packages/api/vx.toml", &format!("{}# edited\n", env.read("packages/api/vx.toml")));
    assert_eq!(affected_ids(&env), ["api#build"], "its own vx.toml, whatever its inputs");
    for (file, contents) in
        [("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\n# edited\n"), ("package-lock.json", "{}")]
    {
        let env = anchored_workspace();
        env.write(file, contents);
        assert_eq!(affected_ids(&env), ["api#build", "web#build"], "{file} affects every task");
    }
}
