//! What a run prints: each task's lines under its prefix, vx's notes
//! beside them (cache hits, timeouts, background processes, a stop), the
//! failures and skipped tasks with their reasons, the `Tasks:` line, and
//! `--summary`. One slot (`--concurrency 1`) keeps the order of lines
//! fixed.

use nix::sys::signal::Signal;

use crate::common::fixtures::task;
use crate::common::process::read_pids;
use crate::common::snapshot::{Transcript, assert_transcript};
use crate::common::{TestEnv, log_cmd, project_toml};

/// `lib#build` and `web#build` (after it), both cacheable, printing to
/// stdout and stderr.
fn lib_and_web(t: &mut Transcript<'_>) {
    let env = t.env();
    env.workspace(&["packages/*"]);
    env.write("packages/lib/src/lib.txt", "lib\n");
    env.write("packages/web/src/web.txt", "web\n");
    t.write(
        "packages/lib/vx.toml",
        "[project]\nname = \"lib\"\n\n[tasks.build]\ncommand = \"echo compiling lib; echo 'note: 1 warning' >&2\"\n\
         inputs = [\"src/**\"]\n",
    );
    t.write(
        "packages/web/vx.toml",
        "[project]\nname = \"web\"\ndepends-on = [\"lib\"]\n\n[tasks.build]\ncommand = \"echo bundling web\"\n\
         depends-on = [\"^build\"]\ninputs = [\"src/**\"]\n",
    );
}

#[test]
fn a_run_then_its_cache_hits() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    lib_and_web(&mut t);
    t.vx(&["run", "build", "--concurrency", "1"]).assert_success();
    t.note("Nothing changed: both come from the cache, their logs replayed.");
    t.vx(&["run", "build", "--concurrency", "1"]).assert_success();
    t.vx(&["run", "build", "--concurrency", "1", "--output-logs", "hash-only", "--force"]).assert_success();
    t.vx(&["run", "build", "--concurrency", "1", "--output-logs", "new-only"]).assert_success();
    t.vx(&["run", "build", "--concurrency", "1", "--output-logs", "none"]).assert_success();
    assert_transcript!(t);
}

#[test]
fn summary_flag() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    lib_and_web(&mut t);
    t.vx(&["run", "lib#build", "--summary"]).assert_success();
    t.vx(&["run", "build", "--summary"]).assert_success();
    t.vx(&["run", "build", "--summary"]).assert_success();
    assert_transcript!(t);
}

/// p#bad fails (exit 3), p#after-bad depends on it, p#other is independent.
fn failing(t: &mut Transcript<'_>) {
    t.env().workspace(&["packages/*"]);
    t.write(
        "packages/p/vx.toml",
        &project_toml(
            "p",
            &[],
            &[
                ("bad", &format!("echo 'error: no such file'; {}; exit 3", log_cmd("p#bad")), &[]),
                ("after-bad", &log_cmd("p#after-bad"), &["bad"]),
                ("other", &log_cmd("p#other"), &[]),
            ],
        ),
    );
}

#[test]
fn failures_and_skips() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    failing(&mut t);
    t.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1"]).assert_code(1);
    t.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1", "--continue=dependents-ok"]).assert_code(1);
    t.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1", "--continue=always"]).assert_code(1);
    assert_transcript!(t);
}

#[test]
fn a_command_that_cannot_start() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    env.workspace(&["packages/*"]);
    t.write("packages/p/vx.toml", "[tasks.build]\ncommand = [\"vx-test-no-such-program\"]\n");
    t.vx(&["run", "build"]).assert_code(1);
    assert_transcript!(t);
}

#[test]
fn timeouts() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    env.workspace(&["packages/*"]);
    let slow = task("slow", "echo started; exec sleep 30", "timeout = \"1s\"");
    let stuck = task("stuck", "echo started; exec sleep 30", "");
    t.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{slow}{stuck}"));
    t.vx(&["run", "p#slow"]).assert_code(1);
    t.vx(&["run", "p#stuck", "--timeout", "1s"]).assert_code(1);
    assert_transcript!(t);
}

#[test]
fn a_background_process_left_running() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    env.workspace(&["packages/*"]);
    // The shell waits until the helper has written its PIDs, so the
    // process vx finds left behind is the helper itself, by its name. The
    // task prints nothing: vx may note the leftover before it has read a
    // task's last lines, which would make the order of lines vary.
    let command =
        "vx-test-forker bg.pids 0 & i=0; while [ ! -e bg.pids ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done";
    t.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{}", task("bg", command, "")));
    let args = ["run", "p#bg"];
    let out = env.vx_command(&args).env("VX_KILL_GRACE_MS", "300").output();
    out.assert_success();
    assert!(out.stdout.contains("vx-test-forker (pid "), "the warning names the process\n{out}");
    t.record(None, &args, &out);
    assert_transcript!(t);
}

#[test]
fn an_interrupted_run() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    env.workspace(&["packages/*"]);
    let wait = task("wait", "echo $$ > task.pid; echo waiting; exec sleep 30", "");
    let after = task("after", &log_cmd("p#after"), "depends-on = [\"wait\"]");
    t.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{wait}{after}"));
    let args = ["run", "p#after"];
    let vx = env.vx_command(&args).env("VX_KILL_GRACE_MS", "300").spawn();
    read_pids(&env, "packages/p/task.pid", 1);
    vx.wait_for_stdout("p#wait: waiting");
    vx.signal(Signal::SIGINT);
    let out = vx.finish();
    out.assert_code(130);
    t.note("SIGINT once p#wait is running:");
    t.record(None, &args, &out);
    assert_transcript!(t);
}
