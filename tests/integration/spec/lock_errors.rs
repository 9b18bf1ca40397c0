//! `vx.lock` refusals: `--frozen` without a lock or with one the
//! configuration has moved away from, what `vx lock --check` lists, and a
//! credential in a command refused before anything is written.

use crate::common::snapshot::{Transcript, assert_transcript};
use crate::common::{TestEnv, log_cmd, project_toml};

fn lib_and_web(env: &TestEnv) -> Transcript<'_> {
    env.workspace(&["packages/*"]);
    env.write("packages/lib/vx.toml", &project_toml("lib", &[], &[("build", &log_cmd("lib#build"), &[])]));
    env.write("packages/web/vx.toml", &project_toml("web", &["lib"], &[("build", &log_cmd("web#build"), &["^build"])]));
    Transcript::new(env)
}

#[test]
fn frozen_lock_mismatch() {
    let env = TestEnv::new();
    let mut t = lib_and_web(&env);
    t.vx(&["run", "build", "--frozen"]).assert_code(2).error_line();
    t.vx(&["lock"]).assert_success();
    t.vx(&["lock", "--check"]).assert_success();
    t.write(
        "packages/lib/vx.toml",
        &project_toml("lib", &[], &[("build", &log_cmd("lib#build-changed"), &[]), ("test", "true", &[])]),
    );
    t.vx(&["lock", "--check"]).assert_code(1);
    t.vx(&["run", "build", "--frozen"]).assert_code(2).error_line();
    assert!(env.log().is_empty(), "a refused run runs nothing");
    assert_transcript!(t);
}

#[test]
fn credentials_are_refused() {
    let env = TestEnv::new();
    let mut t = lib_and_web(&env);
    for command in [
        "curl -H \"Authorization: token ghp_abcdefghijklmnop1234\" https://example.invalid",
        "API_KEY=literal node deploy.js",
    ] {
        t.write("packages/lib/vx.toml", &project_toml("lib", &[], &[("build", command, &[])]));
        t.vx(&["lock"]).assert_code(2).error_line();
    }
    assert!(!env.path("vx.lock").exists(), "no vx.lock is written");
    assert_transcript!(t);
}
