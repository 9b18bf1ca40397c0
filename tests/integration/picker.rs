//! The task picker of a bare `vx run`, driven through a real terminal
//! (tmux): typing part of a name and Enter runs that task and records it
//! for `vx last`; Esc exits 130 with nothing run. Without a terminal the
//! candidates go to stdout and the run fails with exit 2; selection errors
//! come before any picker.

use crate::common::TestEnv;
use crate::common::tmux::Terminal;

fn workspace() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/app/vx.toml",
        "[tasks.build]\ncommand = \"touch ran-build\"\n[tasks.test]\ncommand = \"touch ran-test\"\n",
    );
    env.write("packages/lib/vx.toml", "[tasks.build]\ncommand = \"touch ran-build\"\n");
    env
}

#[test]
fn typing_part_of_a_name_and_enter_runs_it_and_vx_last_names_it() {
    let env = workspace();
    let term = Terminal::start(&env, "run");
    term.wait_for("task to run");
    term.keys(&["-l", "app#te"]);
    term.wait_for("> app#test");
    term.keys(&["Enter"]);
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    assert!(env.path("packages/app/ran-test").exists(), "the picked task ran");
    assert!(!env.path("packages/app/ran-build").exists(), "only the picked task ran");
    let last = env.vx(&["last"]);
    last.assert_success();
    assert_eq!(last.stdout, "vx run app#test\n", "vx last names the picked task\n{last}");
}

#[test]
fn escape_exits_130_and_runs_nothing() {
    let env = workspace();
    let term = Terminal::start(&env, "run");
    term.wait_for("task to run");
    term.keys(&["Escape"]);
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    for marker in ["packages/app/ran-build", "packages/app/ran-test", "packages/lib/ran-build"] {
        assert!(!env.path(marker).exists(), "{marker}: nothing may run");
    }
    env.vx(&["last"]).assert_code(2);
}

#[test]
fn without_a_terminal_the_candidates_are_listed_and_the_exit_code_is_2() {
    let env = workspace();
    let out = env.vx(&["run"]);
    out.assert_code(2);
    assert_eq!(out.stdout, "app#build\napp#test\nlib#build\n", "{out}");
    assert!(out.error_line().starts_with("vx: error: no task named"), "{out}");

    let inside = env.vx_in("packages/app", &["run"]);
    inside.assert_code(2);
    assert_eq!(inside.stdout, "app#build\napp#test\n", "scoped to the project the user stands in\n{inside}");

    let filtered = env.vx(&["run", "--filter", "lib"]);
    filtered.assert_code(2);
    assert_eq!(filtered.stdout, "lib#build\n", "{filtered}");
}

#[test]
fn selection_errors_come_before_the_picker() {
    let env = workspace();
    let out = env.vx(&["run", "--affected"]);
    assert_eq!(out.code, 2, "--affected outside a git repository is refused\n{out}");
    assert_eq!(out.stdout, "", "no candidates are listed when the selection itself fails\n{out}");
    out.error_line();
}

#[test]
fn the_picker_shows_descriptions_and_typing_part_of_one_finds_its_task() {
    let env = workspace();
    env.write(
        "packages/lib/vx.toml",
        "[tasks.build]\ncommand = \"touch ran-build\"\ndescription = \"Compiles the shared library\"\n",
    );
    let term = Terminal::start(&env, "run");
    term.wait_for("lib#build  Compiles the shared library");
    term.keys(&["-l", "shared libr"]);
    term.wait_for("> lib#build  Compiles the shared library");
    term.keys(&["Enter"]);
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    assert!(env.path("packages/lib/ran-build").exists(), "the described task ran");
    let last = env.vx(&["last"]);
    last.assert_success();
    assert_eq!(last.stdout, "vx run lib#build\n", "history records the id, not the description\n{last}");
}
