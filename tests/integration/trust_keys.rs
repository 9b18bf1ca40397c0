//! Keys see what the task sees (issue 36, item 2): a linked source
//! directory or file is keyed by what it leads to, a link loop is one
//! clear line, explicit input globs take files git ignores, an input edited
//! while its task runs is not stored under the old key, and a tool declared
//! only at the workspace root is in every task's key.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::common::fixtures::task;
use crate::common::log_cmd as log;

/// `packages/p` with `build` (inputs as given) logging `p`.
fn project(env: &TestEnv, inputs: &str) {
    env.workspace(&["packages/*"]);
    let build = task("build", &log("p"), &format!("inputs = {inputs}\n"));
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
}

/// Runs `vx run build`: whether it ran the task (a miss) and its output.
#[track_caller]
fn ran(env: &TestEnv) -> (bool, String) {
    env.clear_log();
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    (!env.log().is_empty(), out.to_string())
}

#[track_caller]
fn assert_miss(env: &TestEnv, why: &str) {
    let (ran, out) = ran(env);
    assert!(ran, "{why}: a miss\n{out}");
}

#[track_caller]
fn assert_hit(env: &TestEnv, why: &str) {
    let (ran, out) = ran(env);
    assert!(!ran, "{why}: a hit\n{out}");
}

#[test]
fn a_linked_source_directory_is_keyed_by_what_it_holds() {
    let env = TestEnv::new();
    project(&env, "[\"src/**\"]");
    env.write("shared/one/a.ts", "one");
    env.write("shared/two/a.ts", "two");
    std::os::unix::fs::symlink("../../shared/one", env.path("packages/p/src")).expect("link src");
    assert_miss(&env, "cold");
    assert_hit(&env, "unchanged");
    env.write("shared/one/a.ts", "one, edited");
    assert_miss(&env, "an edit behind the link");
    assert_hit(&env, "unchanged again");
    std::fs::remove_file(env.path("packages/p/src")).expect("unlink");
    std::os::unix::fs::symlink("../../shared/two", env.path("packages/p/src")).expect("re-point src");
    assert_miss(&env, "the link re-pointed");
    env.write("shared/two/deeper/b.ts", "b");
    assert_miss(&env, "a file added behind the link");
}

/// A link out of the workspace is keyed by what it holds, as any link,
/// and said once per run, since `vx watch` and `--affected` look inside
/// the workspace only; a link inside it says nothing.
#[test]
fn a_link_out_of_the_workspace_is_keyed_by_content_and_noted_once() {
    let env = TestEnv::new();
    project(&env, "[\"src/**\"]");
    let outside = env.root().parent().expect("the workspace has a parent").join("outside-src");
    std::fs::create_dir_all(outside.join("deep")).expect("mkdir");
    std::fs::write(outside.join("a.ts"), "one").expect("write");
    std::fs::write(outside.join("deep/b.ts"), "b").expect("write");
    std::os::unix::fs::symlink(&outside, env.path("packages/p/src")).expect("link src");
    let (ran_cold, out) = ran(&env);
    assert!(ran_cold, "cold\n{out}");
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("links out of the workspace")).collect();
    assert_eq!(notes.len(), 1, "one line, however many files and directories lie behind it\n{out}");
    assert!(notes[0].contains("task `build` of packages/p") && notes[0].contains("outside-src"), "{out}");
    std::fs::write(outside.join("deep/b.ts"), "b, edited").expect("write");
    assert_miss(&env, "an edit out of the workspace, keyed by content");

    let inside = TestEnv::new();
    project(&inside, "[\"src/**\"]");
    inside.write("shared/a.ts", "a");
    std::os::unix::fs::symlink("../../shared", inside.path("packages/p/src")).expect("link src");
    let (_, out) = ran(&inside);
    assert!(!out.contains("links out of the workspace"), "{out}");
}

#[test]
fn a_linked_directory_inside_the_inputs_and_a_linked_file_are_followed() {
    let env = TestEnv::new();
    project(&env, "[\"src/**\", \"config.json\"]");
    env.write("packages/p/src/own.ts", "own");
    env.write("shared/lib/util.ts", "u1");
    env.write("shared/config.json", "{}");
    std::os::unix::fs::symlink("../../../shared/lib", env.path("packages/p/src/lib")).expect("link lib");
    std::os::unix::fs::symlink("../../shared/config.json", env.path("packages/p/config.json")).expect("link config");
    assert_miss(&env, "cold");
    assert_hit(&env, "unchanged");
    env.write("shared/lib/util.ts", "u2");
    assert_miss(&env, "an edit in a linked directory below src/");
    env.write("shared/config.json", "{\"a\": 1}");
    assert_miss(&env, "an edit of a linked file, though the link itself did not change");
}

#[test]
fn a_link_loop_among_the_inputs_is_one_clear_line_and_never_cached() {
    let env = TestEnv::new();
    project(&env, "[\"src/**\"]");
    env.write("packages/p/src/a.ts", "a");
    std::os::unix::fs::symlink("..", env.path("packages/p/src/up")).expect("link a loop");
    for round in 0..2 {
        let out = env.vx(&["run", "build"]);
        out.assert_success();
        let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not cached")).collect();
        assert_eq!(notes.len(), 1, "round {round}: one line\n{out}");
        assert!(notes[0].contains("src/up") && notes[0].contains("loop"), "it names the link and the loop\n{out}");
    }
}

#[test]
fn explicit_input_globs_take_files_git_ignores_as_turborepo_does() {
    let env = TestEnv::new();
    env.git_init("main");
    project(&env, "[\"src/**\", \"*.local\"]");
    env.write(".gitignore", "*.local\nsrc/generated/\n");
    env.write("packages/p/src/a.ts", "a");
    env.write("packages/p/src/generated/api.ts", "v1");
    env.write("packages/p/.env.local", "KEY=1");
    env.git_commit_all("init");
    assert_miss(&env, "cold");
    assert_hit(&env, "unchanged");
    env.write("packages/p/.env.local", "KEY=2");
    assert_miss(&env, "an ignored file a glob names");
    env.write("packages/p/src/generated/api.ts", "v2");
    assert_miss(&env, "an ignored file under a glob");
}

#[test]
fn without_declared_inputs_what_git_ignores_stays_out_of_the_key() {
    let env = TestEnv::new();
    env.git_init("main");
    env.workspace(&["packages/*"]);
    let build = task("build", &log("p"), "outputs = [\"dist/**\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write(".gitignore", "*.log\n");
    env.write("packages/p/src/a.ts", "a");
    env.write("packages/p/debug.log", "1");
    assert_miss(&env, "cold");
    env.write("packages/p/debug.log", "2");
    assert_hit(&env, "an ignored file is no input of a task that declares none");
}

#[test]
fn an_input_edited_while_its_task_runs_is_not_stored_under_the_old_key() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // The task (as an editor or a watcher might) changes its own input
    // after vx keyed it, then builds from the new content.
    let build = task(
        "build",
        &format!("{} && printf two > src/a.txt && mkdir -p dist && cp src/a.txt dist/out.txt", log("p")),
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n",
    );
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/a.txt", "one");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("changed while it ran")).collect();
    assert_eq!(notes.len(), 1, "one line names the file\n{out}");
    assert!(notes[0].contains("packages/p/src/a.txt") && notes[0].contains("not cached"), "{out}");
    // The edit reverted: the key is the first run's again, and no entry
    // may answer for it.
    env.write("packages/p/src/a.txt", "one");
    assert_miss(&env, "the key of the old content has no entry");
}

/// The same for a `global-inputs` file: edited while a task runs, the
/// task's result is not stored under the key of its old content.
#[test]
fn a_global_input_edited_while_a_task_runs_is_not_stored_under_the_old_key() {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\nglobal-inputs = [\"tsconfig.base.json\"]\n");
    let build = task(
        "build",
        &format!(
            "{} && printf two > ../../tsconfig.base.json && mkdir -p dist && cp ../../tsconfig.base.json dist/",
            log("p")
        ),
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n",
    );
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/a.txt", "a");
    env.write("tsconfig.base.json", "one");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("changed while it ran")).collect();
    assert_eq!(notes.len(), 1, "one line names the file\n{out}");
    assert!(notes[0].contains("tsconfig.base.json") && notes[0].contains("not cached"), "{out}");
    env.write("tsconfig.base.json", "one");
    assert_miss(&env, "the key of the old content has no entry");
}

/// The pnpm fixture workspace (a root `devDependencies` on `vxf-test`),
/// with a `test` task in each project.
fn pnpm_workspace() -> TestEnv {
    let env = TestEnv::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src/lockfile/fixtures/pnpm9/before");
    copy_tree(&fixture, env.root());
    env.write("vx.toml", "[workspace]\nprojects = [\"apps/*\", \"packages/*\"]\n");
    for dir in ["apps/web", "apps/api", "packages/ui"] {
        let name = dir.rsplit('/').next().expect("a name");
        env.write(&format!("{dir}/src/index.js"), name);
        env.write(&format!("{dir}/vx.toml"), &task("test", &log(name), "inputs = [\"src/**\"]\n"));
    }
    env
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read the fixture") {
        let entry = entry.expect("an entry");
        let dest: PathBuf = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy");
        }
    }
}

#[test]
fn a_tool_declared_only_at_the_root_is_in_every_tasks_key() {
    let env = pnpm_workspace();
    let run = |env: &TestEnv| {
        env.clear_log();
        env.vx(&["run", "test"]).assert_success();
        env.log_set()
    };
    assert_eq!(run(&env), ["api", "ui", "web"], "cold");
    assert!(run(&env).is_empty(), "all hits");
    // `pnpm add -w -D vxf-test@1.0.1`: the root importer's pin moves.
    let lock = std::fs::read_to_string(env.path("pnpm-lock.yaml")).expect("the lockfile");
    let before = "  .:\n    devDependencies:\n      vxf-test:\n        specifier: 1.0.0\n        version: 1.0.0\n";
    assert!(lock.contains(before), "the fixture's root importer");
    let after = "  .:\n    devDependencies:\n      vxf-test:\n        specifier: 1.0.1\n        version: 1.0.1\n";
    env.write("pnpm-lock.yaml", &lock.replacen(before, after, 1));
    let why = env.vx(&["why", "@fx/ui#test"]);
    assert!(why.stdout.contains("root-dependencies"), "vx why names the root's dependencies\n{why}");
    assert_eq!(run(&env), ["api", "ui", "web"], "every task runs again");
    assert!(run(&env).is_empty(), "then hits");
    // A root script is no dependency: nothing moves.
    let pkg = std::fs::read_to_string(env.path("package.json")).expect("package.json");
    env.write(
        "package.json",
        &pkg.replacen("\"private\": true,", "\"private\": true,\n  \"scripts\": {\"x\": \"y\"},", 1),
    );
    assert!(run(&env).is_empty(), "a root script changes no key");
}

#[test]
fn an_input_glob_that_matches_nothing_is_said_once_when_the_task_runs() {
    let env = TestEnv::new();
    project(&env, "[\"src/**\", \"assests/**\", \"/tsconfig.base.json\"]");
    env.write("packages/p/src/a.ts", "a");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("matches no file")).collect();
    assert_eq!(notes.len(), 2, "one line for each glob that names nothing\n{out}");
    assert!(notes[0].contains("`assests/**`") && notes[1].contains("`/tsconfig.base.json`"), "{out}");
    env.write("tsconfig.base.json", "{}");
    env.write("packages/p/assests/logo.svg", "<svg/>");
    let out = env.vx(&["run", "build"]);
    assert!(!out.stdout.contains("matches no file"), "{out}");
}
