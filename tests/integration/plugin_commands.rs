//! Command plugins (`tests/plugins/testcmd`): `vx NAME ARGS` runs the
//! plugin with its arguments, its grants and the workspace model read
//! only; `vx --help` lists it; it cannot take a built-in's name; its exit
//! code is vx's; its failures are one line.

use crate::common::{TestEnv, project_toml, vx_bin};
use crate::plugins::component;

/// `app` depends on `lib`; `lib#build` succeeds; `testcmd` is added.
fn workspace(grants: &[&str]) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"app\", \"lib\"]\n");
    env.write("app/vx.toml", &project_toml("app", &["lib"], &[("build", "echo app", &["^build"])]));
    env.write("lib/vx.toml", &project_toml("lib", &[], &[("build", "echo lib", &[])]));
    let testcmd = component("testcmd");
    let mut args = vec!["plugin", "add", testcmd.to_str().unwrap()];
    args.extend_from_slice(grants);
    let out = env.vx(&args);
    out.assert_success();
    assert!(out.stdout.contains("added `testcmd`: command 0.1.0"), "{out}");
    env
}

#[test]
fn the_verb_gets_its_arguments_as_typed_and_prints_to_vx_s_stdout() {
    let env = workspace(&[]);
    let out = env.vx(&["testcmd", "echo", "--since", "v1.2", "two words", "-C"]);
    out.assert_success();
    assert_eq!(out.stdout, "[--since]\n[v1.2]\n[two words]\n[-C]\n", "unprefixed, in order\n{out}");
    let out = env.vx_in("app", &["-C", "..", "testcmd", "echo", "x"]);
    out.assert_success();
    assert_eq!(out.stdout, "[x]\n", "{out}");
}

#[test]
fn it_reads_the_projects_tasks_and_dependencies() {
    let env = workspace(&[]);
    let out = env.vx_in("lib", &["testcmd", "projects"]);
    out.assert_success();
    assert_eq!(
        out.stdout,
        "app dir=app deps=[lib] dependents=[] tags=[] tasks=[build=echo app]\n\
         lib dir=lib deps=[] dependents=[app] tags=[] tasks=[build=echo lib]\n",
        "{out}"
    );
}

#[test]
fn it_reads_the_history_summary() {
    let env = workspace(&[]);
    let out = env.vx(&["testcmd", "history", "lib#build"]);
    out.assert_success();
    assert_eq!(out.stdout, "lib#build: executions=0 flaky=0 p50=false\n", "no history yet, and none created\n{out}");
    assert!(!env.root().join(".vx/history.db").exists(), "reading history created none");
    // Declared outputs make the builds cacheable: the second run is hits.
    for p in ["app", "lib"] {
        let toml = env.read(&format!("{p}/vx.toml"));
        env.write(&format!("{p}/vx.toml"), &format!("{toml}outputs = [\"dist/**\"]\n"));
    }
    env.vx(&["run", "build"]).assert_success();
    env.vx(&["run", "build"]).assert_success();
    let out = env.vx(&["testcmd", "history", "lib#build"]);
    out.assert_success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "invocation `vx run build` exit=0 tasks=2 cached=2",
            "invocation `vx run build` exit=0 tasks=2 cached=0",
            "lib#build: executions=1 flaky=0 p50=true",
        ],
        "{out}"
    );
}

#[test]
fn its_exit_code_is_vx_s_and_errors_are_one_line() {
    let env = workspace(&[]);
    let out = env.vx(&["testcmd", "exit", "7"]);
    out.assert_code(7);
    assert_eq!(out.stderr, "exiting with 7\n", "its stderr is vx's, unprefixed\n{out}");
    let out = env.vx(&["testcmd", "fail"]);
    out.assert_code(1);
    assert!(
        out.stderr.starts_with("vx: error: plugin `testcmd` failed in `run`: unavailable: testcmd was told to fail"),
        "{out}"
    );
    assert_eq!(out.stderr.lines().count(), 1, "{out}");
    let out = env.vx(&["testcmd", "panic"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains("plugin `testcmd` failed in `run`") && out.stderr.contains("testcmd was told to panic"),
        "{out}"
    );
}

#[test]
fn an_endless_loop_stops_at_its_cpu_budget() {
    let env = workspace(&[]);
    let toml = env.read("vx.toml");
    env.write("vx.toml", &format!("{toml}limits = {{ cpu = \"300ms\" }}\n"));
    let out = env.vx(&["testcmd", "spin"]);
    out.assert_code(1);
    assert!(out.stderr.contains("CPU budget of 300ms") && out.stderr.contains("[plugins.testcmd].limits.cpu"), "{out}");
}

#[test]
fn it_sees_only_what_it_is_granted() {
    let env = workspace(&["--dir", "notes", "--env", "TESTCMD_TOKEN"]);
    env.write("notes/CHANGES.md", "- fixed the thing\n");
    env.write("secret.txt", "no\n");
    let out = env.vx(&["testcmd", "read", "notes/CHANGES.md"]);
    out.assert_success();
    assert_eq!(out.stdout, "- fixed the thing\n", "{out}");
    let out = env.vx(&["testcmd", "read", "secret.txt"]);
    out.assert_code(1);
    assert!(out.stderr.contains("denied: secret.txt"), "{out}");
    let vars = [("TESTCMD_TOKEN", "t0k"), ("OTHER_SECRET", "s")];
    let out = env.tool_in(".", vx_bin(), &["testcmd", "env", "TESTCMD_TOKEN"], &vars);
    assert_eq!(out.stdout, "TESTCMD_TOKEN=t0k\n", "{out}");
    let out = env.tool_in(".", vx_bin(), &["testcmd", "env", "OTHER_SECRET"], &vars);
    assert_eq!(out.stdout, "OTHER_SECRET=(unset)\n", "{out}");
}

#[test]
fn vx_help_lists_plugin_commands_and_their_own_help_is_theirs() {
    let env = workspace(&[]);
    let out = env.vx(&["--help"]);
    out.assert_success();
    let section = out.stdout.split("Plugin commands").nth(1).unwrap_or_else(|| panic!("no plugin section\n{out}"));
    assert!(section.contains("testcmd        prints what vx lets a command plugin see"), "{out}");
    assert!(!env.vx(&["run", "--help"]).stdout.contains("Plugin commands"), "only the top-level help lists them");
    let out = env.vx(&["testcmd", "--help"]);
    out.assert_success();
    assert!(out.stdout.starts_with("usage: vx testcmd projects|history TASK"), "{out}");
}

#[test]
fn a_command_plugin_cannot_take_a_built_in_name() {
    let env = workspace(&[]);
    for name in ["run", "show", "help", "turbo"] {
        let out = env.vx(&["plugin", "add", component("testcmd").to_str().unwrap(), "--name", name]);
        out.assert_code(2);
        assert!(out.stderr.contains(&format!("`{name}` is one of vx's own commands")), "{out}");
        assert!(!env.read("vx.toml").contains(&format!("[plugins.{name}]")), "nothing was written\n{out}");
    }
    // A hand-written table does not shadow the built-in either.
    let toml = env.read("vx.toml");
    env.write("vx.toml", &format!("{toml}\n[plugins.show]\npath = \".vx/plugins/testcmd.wasm\"\n"));
    let out = env.vx(&["show"]);
    out.assert_success();
    assert!(out.stdout.starts_with("app (app)"), "vx's own `show` ran\n{out}");
}

#[test]
fn a_verb_that_is_not_a_command_plugin_is_a_usage_error() {
    let env = workspace(&[]);
    env.vx(&["plugin", "add", "junit"]).assert_success();
    let out = env.vx(&["junit"]);
    out.assert_code(2);
    assert!(out.stderr.contains("plugin `junit` is a reporter plugin, not a command"), "{out}");
    let out = env.vx(&["nosuch"]);
    out.assert_code(2);
    assert!(out.stderr.contains("nosuch"), "clap's unknown-subcommand error\n{out}");
}
