//! Outputs are owned safely (issue 36, item 1): vx never removes or
//! overwrites a file its task does not own. What the configuration shows
//! is refused at load (exit 2, located, naming both tasks and the mend);
//! what only the disk shows (a file git tracks, a linked directory) is
//! left in place, and the task is then not cached, with one line saying
//! why.

use crate::common::TestEnv;
use crate::common::fixtures::task;
use crate::common::log_cmd as log;

/// `packages/NAME/vx.toml` with `tasks` (each a `[tasks.X]` table).
fn project(env: &TestEnv, name: &str, extra: &str, tasks: &[String]) {
    let mut text = format!("[project]\nname = \"{name}\"\n{extra}");
    for t in tasks {
        text.push_str(t);
    }
    env.write(&format!("packages/{name}/vx.toml"), &text);
}

/// Asserts a load error: exit 2, one line at `file`, saying each of `says`.
#[track_caller]
fn refused(env: &TestEnv, file: &str, says: &[&str]) {
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line().to_string();
    assert!(line.starts_with(&format!("vx: error: {file}:")), "located in {file}\n{out}");
    for s in says {
        assert!(line.contains(s), "the error says `{s}`\n{out}");
    }
    assert!(env.log().is_empty(), "nothing ran\n{out}");
}

#[test]
fn an_output_glob_that_matches_the_projects_own_config_is_refused_at_load() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    project(&env, "app", "", &[task("build", &log("app"), "outputs = [\"**\"]")]);
    env.write("packages/app/package.json", "{\"name\": \"app\"}");
    env.write("packages/app/src/main.ts", "source");
    refused(&env, "packages/app/vx.toml", &["`**`", "app#build", "vx.toml", "narrow"]);
    assert!(env.path("packages/app/vx.toml").exists() && env.path("packages/app/package.json").exists());
    assert_eq!(env.read("packages/app/src/main.ts"), "source");
}

#[test]
fn a_root_anchored_output_that_reaches_another_project_is_refused_at_load() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    project(&env, "web", "", &[task("build", &log("web"), "outputs = [\"dist/**\", \"/packages/ui/src/**\"]")]);
    project(&env, "ui", "", &[task("build", &log("ui"), "inputs = [\"src/**\"]")]);
    env.write("packages/ui/src/button.ts", "source");
    refused(&env, "packages/web/vx.toml", &["/packages/ui/src/**", "web#build", "project `ui`"]);
    assert_eq!(env.read("packages/ui/src/button.ts"), "source");
}

#[test]
fn two_unordered_tasks_whose_outputs_meet_are_refused_until_an_edge_orders_them() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let bundle = |extra: &str| task("bundle", &log("bundle"), &format!("outputs = [\"dist/**/*.js\"]\n{extra}"));
    let build =
        task("build", &format!("{} && mkdir -p dist && echo b > dist/b.js", log("build")), "outputs = [\"dist/**\"]");
    project(&env, "app", "", &[build.clone(), bundle("")]);
    refused(
        &env,
        "packages/app/vx.toml",
        &["app#build", "app#bundle", "dist/", "depends-on", "neither runs after the other"],
    );

    project(&env, "app", "", &[build.clone(), bundle("depends-on = [\"build\"]")]);
    env.vx(&["run", "build", "bundle"]).assert_success();

    // Globs that share a directory but no path are no conflict.
    let css = task("bundle", &log("bundle"), "outputs = [\"dist/**/*.css\"]");
    let js = task("build", &log("build"), "outputs = [\"dist/**/*.js\"]");
    project(&env, "app", "", &[js, css]);
    env.vx(&["run", "build", "bundle"]).assert_success();
}

#[test]
fn root_anchored_outputs_of_two_projects_that_meet_need_an_edge() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let gen_task = |word: &str, glob: &str| task("gen", &log(word), &format!("outputs = [\"{glob}\"]"));
    project(&env, "a", "", &[gen_task("a", "/gen/shared/**")]);
    project(&env, "b", "", &[gen_task("b", "/gen/**")]);
    let out = env.vx(&["run", "gen"]);
    out.assert_code(2);
    assert!(out.error_line().contains("a#gen") && out.error_line().contains("b#gen"), "both named\n{out}");
    project(&env, "b", "depends-on = [\"a\"]\n", &[format!("{}depends-on = [\"^gen\"]\n", gen_task("b", "/gen/**"))]);
    env.vx(&["run", "gen"]).assert_success();
}

#[test]
fn a_file_git_tracks_is_never_removed_by_an_output_glob_and_the_task_is_not_cached() {
    // A compiler that emits `src/*.js` in place, beside a hand-written,
    // committed `src/legacy.js` that the output glob also matches.
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let build = task(
        "build",
        &format!("{} && cp src/main.ts src/main.js", log("app")),
        "inputs = [\"src/**/*.ts\"]\noutputs = [\"src/**/*.js\"]",
    );
    project(&env, "app", "", &[build]);
    env.write("packages/app/src/main.ts", "compiled");
    env.write("packages/app/src/legacy.js", "hand-written");
    env.git_init("main");
    env.git_commit_all("sources");
    for round in 0..2 {
        let out = env.vx(&["run", "build"]);
        out.assert_success();
        assert_eq!(env.read("packages/app/src/legacy.js"), "hand-written", "round {round}: left in place\n{out}");
        assert_eq!(env.read("packages/app/src/main.js"), "compiled", "round {round}\n{out}");
        let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("git tracks")).collect();
        assert_eq!(notes.len(), 1, "round {round}: one line says why\n{out}");
        assert!(notes[0].contains("not cached") && notes[0].contains("src/legacy.js"), "{out}");
        assert_eq!(out.summary().cached, 0, "round {round}: never a hit\n{out}");
    }
    assert_eq!(env.log(), ["app", "app"], "the task ran both times");
}

#[test]
fn an_output_glob_below_a_linked_directory_never_removes_what_the_link_leads_to() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    project(&env, "app", "", &[task("build", &log("app"), "inputs = []\noutputs = [\"dist/js/**\"]")]);
    env.write("packages/app/src/js/keep.js", "source");
    std::os::unix::fs::symlink("src", env.path("packages/app/dist")).expect("link dist to src");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(env.read("packages/app/src/js/keep.js"), "source", "not removed through the link\n{out}");
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not cached")).collect();
    assert_eq!(notes.len(), 1, "one line says why\n{out}");
    assert!(notes[0].contains("symbolic link"), "{out}");
}

#[test]
fn a_restore_never_overwrites_a_file_git_tracks() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // The command leaves a file that is already there alone, so what is
    // on disk afterwards shows what vx itself did.
    let build = task(
        "build",
        &format!("{} && mkdir -p dist && ([ -e dist/out.txt ] || cp src/a.txt dist/out.txt)", log("app")),
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
    );
    project(&env, "app", "", &[build]);
    env.write("packages/app/src/a.txt", "built");
    env.git_init("main");
    env.vx(&["run", "build"]).assert_success();
    // Someone commits a hand-made file where the entry has another.
    env.write("packages/app/dist/out.txt", "committed by hand");
    env.git(&["add", "--force", "packages/app/dist/out.txt"]);
    env.git_commit_all("a hand-made output");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let refusals: Vec<&str> = out.stdout.lines().filter(|l| l.contains("git tracks")).collect();
    assert!(refusals.iter().any(|l| l.contains("refused to restore over `packages/app/dist/out.txt`")), "{out}");
    assert_eq!(env.read("packages/app/dist/out.txt"), "committed by hand", "neither restored over nor removed\n{out}");
    assert_eq!(out.summary().cached, 0, "{out}");
}
