//! Usage errors: one line (exit 2) that names the flag and what it got,
//! says what was expected and ends with how to see `--help`.

use crate::common::snapshot::{Transcript, assert_transcript};
use crate::common::{TestEnv, log_cmd, project_toml};

fn workspace(env: &TestEnv) -> Transcript<'_> {
    env.workspace(&["packages/*"]);
    env.write("packages/p/vx.toml", &project_toml("p", &[], &[("build", &log_cmd("p#build"), &[])]));
    Transcript::new(env)
}

#[test]
fn bad_flag_values() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    for args in [
        &["run", "build", "--bogus"][..],
        &["run", "build", "--continue=sometimes"],
        &["run", "build", "--dry=yaml"],
        &["run", "build", "--output-logs", "most"],
        &["run", "build", "--log-order", "random"],
        &["run", "build", "--timeout", "10"],
        &["run", "build", "--concurrency", "0"],
        &["run", "build", "--concurrency", "1.5"],
        &["run", "build", "--concurrency"],
        &["run", "build", "--tag", "novalue"],
        &["run", "build", "--tag", "=v"],
        &["run", "build", "--cache", "local:x"],
        &["show", "--format", "xml"],
    ] {
        t.vx(args).assert_code(2).error_line();
    }
    assert!(env.log().is_empty());
    assert_transcript!(t);
}

#[test]
fn value_flags_do_not_swallow_flags() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    for args in [
        &["run", "build", "--cache-dir", "--force"][..],
        &["run", "build", "--concurrency", "--force"],
        &["run", "build", "--filter", "--all"],
        &["run", "build", "-F", "--all"],
    ] {
        t.vx(args).assert_code(2).error_line();
    }
    assert!(env.log().is_empty());
    assert_transcript!(t);
}

#[test]
fn commands_vx_does_not_know() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    t.vx(&["frobnicate"]).assert_code(2).error_line();
    t.vx(&["completions", "nushell"]).assert_code(2).error_line();
    t.vx(&[]).assert_code(2);
    t.vx(&["run", "build", "--env-mode", "lax"]).assert_code(2).error_line();
    assert_transcript!(t);
}
