//! What a run prints and what a task sees: `project#task: ` prefixes on
//! stdout and stderr lines, no colour under `NO_COLOR`, the final summary
//! line, `--output-logs` / `--log-order`, the task environment
//! (`VX_PROJECT`, `VX_TASK`, cwd, `node_modules/.bin` on `PATH`), and array
//! commands exec'd without a shell.

use crate::common::{TestEnv, project_toml};

fn one_task(command_toml: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/web/vx.toml",
        &format!("[project]\nname = \"web\"\n\n[tasks.build]\ncommand = {command_toml}\n"),
    );
    env
}

#[test]
fn every_line_carries_the_task_prefix() {
    let env = one_task(r#"'printf "one\ntwo\n"; echo to-stderr >&2; printf "no newline"'"#);
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.task_lines("web#build"), ["one", "two", "to-stderr", "no newline"], "{out}");
    for line in out.stdout.lines() {
        assert!(
            line.starts_with("web#build: ") || line.starts_with("Tasks: "),
            "every line is a task line or the summary: `{line}`\n{out}"
        );
    }
}

/// Turborepo's `--log-prefix`: `none` prints a task's lines as it printed
/// them; `task` and `auto` prefix them, as by default. Its `--log-order
/// auto` streams.
#[test]
fn log_prefix_none_leaves_lines_as_printed_and_auto_order_streams() {
    let env = one_task(r#"'printf "one\ntwo\n"; printf "no newline"'"#);
    let out = env.vx(&["run", "build", "--log-prefix", "none", "--log-order", "auto"]);
    out.assert_success();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.starts_with("Tasks: ")).collect();
    assert_eq!(lines, ["one", "two", "no newline"], "{out}");
    for prefix in ["task", "auto"] {
        let out = env.vx(&["run", "build", "--force", "--log-prefix", prefix]);
        out.assert_success();
        assert_eq!(out.task_lines("web#build"), ["one", "two", "no newline"], "{out}");
    }
    let bad = env.vx(&["run", "build", "--log-prefix", "always"]);
    bad.assert_code(2);
    assert!(bad.error_line().contains("--log-prefix expects auto, task or none, got `always`"), "{bad}");
}

#[test]
fn no_colour_with_no_color_or_a_pipe() {
    let env = one_task("\"echo hi\"");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(!out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'), "no ANSI escapes\n{out:?}");
}

#[test]
fn the_summary_is_the_last_line_and_counts_tasks() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &[], &[("build", "echo a", &[])]));
    env.write("packages/b/vx.toml", &project_toml("b", &[], &[("build", "echo b", &[])]));
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let last = out.stdout.lines().last().expect("output");
    assert!(last.starts_with("Tasks: "), "the summary comes last\n{out}");
    let s = out.summary();
    assert_eq!((s.run, s.succeeded, s.failed, s.skipped), (2, 2, 0, 0), "{out}");
}

#[test]
fn output_logs_none_hides_task_output_but_not_the_summary() {
    let env = one_task("\"echo hidden\"");
    let out = env.vx(&["run", "build", "--output-logs", "none"]);
    out.assert_success();
    assert!(out.task_lines("web#build").is_empty(), "{out}");
    assert_eq!(out.summary().succeeded, 1);
}

#[test]
fn output_logs_errors_only_shows_failures_only() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/p/vx.toml",
        &project_toml("p", &[], &[("ok", "echo fine", &[]), ("bad", "echo broken; exit 1", &[])]),
    );
    let out = env.vx(&["run", "ok", "bad", "--output-logs", "errors-only", "--continue"]);
    out.assert_code(1);
    assert!(out.task_lines("p#ok").is_empty(), "a successful task stays quiet\n{out}");
    assert_eq!(out.task_lines("p#bad"), ["broken"], "{out}");
}

#[test]
fn grouped_log_order_keeps_each_tasks_lines_together() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let noisy = "i=0; while [ $i -lt 50 ]; do echo line-$i; i=$((i+1)); done";
    env.write("packages/a/vx.toml", &project_toml("a", &[], &[("build", noisy, &[])]));
    env.write("packages/b/vx.toml", &project_toml("b", &[], &[("build", noisy, &[])]));
    let out = env.vx(&["run", "build", "--log-order", "grouped", "--concurrency", "2"]);
    out.assert_success();
    let owners: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_once(": ").map(|(id, _)| id))
        .filter(|id| id.ends_with("#build"))
        .collect();
    assert_eq!(owners.len(), 100, "{out}");
    let switches = owners.windows(2).filter(|w| w[0] != w[1]).count();
    assert_eq!(switches, 1, "one block per task\n{out}");
}

#[test]
fn tasks_see_vx_project_vx_task_and_their_directory() {
    let env = one_task(r#"'echo "$VX_PROJECT|$VX_TASK|$(pwd)"'"#);
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let expected = format!("web|build|{}", env.root().join("packages/web").display());
    assert_eq!(out.task_lines("web#build"), [expected.as_str()], "{out}");
}

#[test]
fn project_node_modules_bin_is_on_path() {
    let env = one_task("\"hello-tool from-plain-command\"");
    env.write_executable("packages/web/node_modules/.bin/hello-tool", "#!/bin/sh\necho \"project tool: $1\"\n");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.task_lines("web#build"), ["project tool: from-plain-command"], "{out}");
}

#[test]
fn node_modules_bin_works_through_the_shell_and_in_arrays() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/web/vx.toml",
        "[tasks.shell]\ncommand = \"hello-tool a && hello-tool b\"\n\n[tasks.array]\ncommand = [\"hello-tool\", \"c d\"]\n",
    );
    env.write_executable("packages/web/node_modules/.bin/hello-tool", "#!/bin/sh\necho \"tool: $1\"\n");
    let out = env.vx(&["run", "shell", "array", "--concurrency", "1"]);
    out.assert_success();
    assert_eq!(out.task_lines("web#shell"), ["tool: a", "tool: b"], "{out}");
    assert_eq!(out.task_lines("web#array"), ["tool: c d"], "{out}");
}

#[test]
fn root_node_modules_bin_is_on_path_after_the_projects() {
    let env = one_task("\"which-tool\"");
    env.write_executable("node_modules/.bin/which-tool", "#!/bin/sh\necho root\n");
    env.write_executable("node_modules/.bin/root-only", "#!/bin/sh\necho root-only\n");
    env.write("packages/web/vx.toml", "[tasks.build]\ncommand = \"which-tool && root-only\"\n");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.task_lines("web#build"), ["root", "root-only"], "{out}");

    env.write_executable("packages/web/node_modules/.bin/which-tool", "#!/bin/sh\necho project\n");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.task_lines("web#build"), ["project", "root-only"], "the project's bin comes first\n{out}");
}

#[test]
fn node_modules_bin_comes_before_the_system_path() {
    let env = one_task("\"uname\"");
    env.write_executable("packages/web/node_modules/.bin/uname", "#!/bin/sh\necho shadowed\n");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.task_lines("web#build"), ["shadowed"], "{out}");
}

#[test]
fn array_commands_are_execd_without_a_shell() {
    let env = one_task(r#"["printf", "%s|", "a b", "$HOME", "*", "it's", "; exit 1"]"#);
    env.write("packages/web/file-that-a-glob-would-match", "");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(
        out.task_lines("web#build"),
        ["a b|$HOME|*|it's|; exit 1|"],
        "arguments reach the program verbatim\n{out}"
    );
}

#[test]
fn string_commands_run_through_sh() {
    let env = one_task(r#"'for w in x y; do printf "%s," "$w"; done; echo; exit 0'"#);
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.task_lines("web#build"), ["x,y,"], "{out}");
}
