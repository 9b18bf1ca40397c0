//! The terminal UI (`--ui=tui`), driven through a real terminal (tmux):
//! the task list with live status, the selected task's log, search,
//! scroll, typing into an interactive task's pty, restarting a server, and
//! Ctrl-C stopping everything through the guard and giving the terminal
//! back. Without a terminal, the stream output as before.

use crate::common::TestEnv;
use crate::common::process::{alive, poll};
use crate::common::tmux::Terminal;

/// `api#dev`, a server (after `api#build`) that writes its pid to a file
/// named for it and 40 numbered lines; `cli#ask`, an interactive task that
/// asks a name, greets it and then waits (so Ctrl-C must stop it too).
fn workspace() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/api/vx.toml",
        r#"[tasks.build]
command = "echo built api"

[tasks.dev]
command = "echo $$ > pid-$$; i=0; while [ $i -lt 40 ]; do i=$((i+1)); echo line $i; done; echo listening; while true; do sleep 0.1; done"
depends-on = ["build"]
persistent = true
ready = { log = "listening" }
"#,
    );
    env.write(
        "packages/cli/vx.toml",
        r#"[tasks.ask]
command = "printf 'Name? '; read name; echo \"hello, $name\"; [ -t 0 ] && echo 'on a terminal'; echo $$ > ask.pid; exec sleep 600"
interactive = true
"#,
    );
    env
}

/// The pids the server wrote, one per start.
fn server_pids(env: &TestEnv) -> Vec<i32> {
    let dir = std::fs::read_dir(env.path("packages/api")).expect("the project exists");
    dir.flatten().filter_map(|e| e.file_name().to_str()?.strip_prefix("pid-")?.parse().ok()).collect()
}

#[test]
fn the_tui_lists_tasks_takes_input_scrolls_restarts_a_server_and_ctrl_c_stops_everything() {
    let env = workspace();
    let term = Terminal::start(&env, "run dev ask --ui=tui --concurrency 4");
    term.wait_for("Tasks (3)");
    term.wait_for("api#build");
    // The server is ready: its mark and its word in the list.
    term.wait_for("api#dev ready");

    // Search narrows the list; the selected task's log shows its prompt.
    term.keys(&["/"]);
    term.keys(&["-l", "ask"]);
    term.wait_for("search: ask");
    term.keys(&["Enter"]);
    term.wait_for("Tasks matching \"ask\" (1)");
    term.wait_for("Name?");
    term.keys(&["i"]);
    term.wait_for("typing into cli#ask");
    term.keys(&["-l", "ada"]);
    term.keys(&["Enter"]);
    term.wait_for("hello, ada");
    term.wait_for("on a terminal");
    term.keys(&["Escape"]);
    // Esc on a new search shows every task again, the selection kept.
    term.keys(&["/"]);
    term.keys(&["Escape"]);
    term.wait_for("Tasks (3)");
    term.wait_for("›▶ cli#ask");

    // To the server: its log follows the end; a page up shows earlier lines.
    term.keys(&["/"]);
    term.keys(&["-l", "dev"]);
    term.keys(&["Enter"]);
    term.wait_for("listening");
    term.keys(&["PageUp"]);
    term.wait_for("(scrolled up 10 lines)");
    assert!(!term.screen().contains("listening"), "scrolled up, the last line is out of view:\n{}", term.screen());
    term.keys(&["PageDown"]);
    term.wait_for("listening");

    // `r` restarts it: the first process is stopped and a second started.
    let first = server_pids(&env);
    assert_eq!(first.len(), 1, "one server started: {first:?}");
    term.keys(&["r"]);
    assert!(poll(|| server_pids(&env).len() == 2), "the server was not started again:\n{}", term.screen());
    assert!(poll(|| !alive(first[0])), "the first server still runs after the restart");
    term.wait_for("api#dev ready");
    // The note sits above the new server's 41 lines: four pages up.
    for _ in 0..4 {
        term.keys(&["PageUp"]);
    }
    term.wait_for("(scrolled up 40 lines)");
    term.wait_for("vx: restarting");
    term.keys(&["End"]);
    term.wait_for("listening");

    // A key that does nothing here says why.
    term.keys(&["i"]);
    term.wait_for("api#dev takes no input: set `interactive = true` on the task");

    // Ctrl-C stops the run through the guard: exit 130, nothing left (the
    // interactive task's sleep included), and the terminal is back with
    // the summary printed on it.
    let pids = server_pids(&env);
    let read_pid = || std::fs::read_to_string(env.path("packages/cli/ask.pid")).ok()?.trim().parse::<i32>().ok();
    assert!(poll(|| read_pid().is_some_and(alive)), "the interactive task is not waiting in its sleep");
    let sleeper = read_pid().expect("the pid was read");
    term.keys(&["C-c"]);
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    for pid in pids {
        assert!(!alive(pid), "server {pid} outlived vx");
    }
    assert!(!alive(sleeper), "the interactive task outlived vx");
    let screen = term.screen();
    assert!(screen.contains("Tasks:"), "the summary is printed after the UI:\n{screen}");
    assert!(!screen.contains("Tasks (3)"), "the UI is gone from the screen:\n{screen}");
}

#[test]
fn a_persistent_task_on_a_terminal_gets_the_tui_and_q_stops_it() {
    let env = workspace();
    let term = Terminal::start(&env, "run dev");
    term.wait_for("Tasks (2)");
    term.wait_for("api#dev ready");
    let server = server_pids(&env);
    term.keys(&["q"]);
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    assert!(server.iter().all(|&pid| !alive(pid)), "q left the server running");
}

#[test]
fn a_run_that_ends_closes_the_tui_by_itself_and_prints_its_summary() {
    let env = workspace();
    let term = Terminal::start(&env, "run build --ui=tui");
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    term.wait_for("Tasks: 1 run, 1 succeeded, 0 failed, 0 skipped, 0 cached");
    // The task's output was drawn in the UI, gone with it: nothing streamed.
    assert!(!term.screen().contains("built api"), "the run was streamed, not shown in the UI:\n{}", term.screen());
}

#[test]
fn ui_stream_on_a_terminal_keeps_the_prefixed_lines() {
    let env = workspace();
    let term = Terminal::start(&env, "run build --ui=stream");
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    let screen = term.screen();
    assert!(screen.contains("api#build") && screen.contains("built api"), "{screen}");
    assert!(!screen.contains("Tasks ("), "no task list:\n{screen}");
}

#[test]
fn without_a_terminal_ui_tui_falls_back_to_the_stream_and_says_so() {
    let env = workspace();
    let out = env.vx(&["run", "build", "--ui=tui"]);
    out.assert_success();
    assert!(out.stderr.contains("vx: --ui=tui needs a terminal (stdin and stdout); showing the stream"), "{out}");
    assert!(out.stdout.contains("built api"), "{out}");
    assert!(!out.stdout.contains('\x1b'), "no screen control on a pipe: {out}");

    let bad = env.vx(&["run", "build", "--ui=fancy"]);
    bad.assert_code(2);
    assert!(bad.stderr.contains("--ui expects tui or stream, got `fancy`"), "{bad}");
}

#[test]
fn an_interactive_task_cannot_be_cached() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", "[tasks.ask]\ncommand = \"true\"\ninteractive = true\ncache = true\n");
    let out = env.vx(&["run", "ask"]);
    out.assert_code(2);
    assert!(out.stderr.contains("task `ask` is interactive and cached"), "{out}");
    assert!(out.stderr.contains("set `cache = false` or drop `interactive`"), "{out}");
}

/// The vx processes working in `root` (the run and its guard).
fn vx_processes_in(root: &std::path::Path) -> Vec<i32> {
    let root = root.canonicalize().expect("the workspace exists");
    let entries = std::fs::read_dir("/proc").expect("read /proc");
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| alive(pid))
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "vx"))
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == root))
        .collect()
}

#[test]
fn closing_the_terminal_stops_the_run_and_leaves_nothing_behind() {
    let env = workspace();
    let term = Terminal::start(&env, "run dev --ui=tui");
    term.wait_for("api#dev ready");
    let server = server_pids(&env);
    assert!(!vx_processes_in(env.root()).is_empty(), "vx runs in the workspace");
    // The window goes away: the terminal hangs up under vx.
    term.tmux(&["kill-server"]);
    assert!(poll(|| vx_processes_in(env.root()).is_empty()), "vx outlived its terminal");
    assert!(server.iter().all(|&pid| !alive(pid)), "the server outlived its terminal");
}
