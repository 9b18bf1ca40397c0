//! `vx show`: the workspace as text and as JSON, whole or one project.

use super::plan::workspace;
use crate::common::TestEnv;
use crate::common::snapshot::assert_transcript;

#[test]
fn show_text() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    t.vx(&["show"]).assert_success();
    t.vx(&["show", "web"]).assert_success();
    assert_transcript!(t);
}

#[test]
fn show_json() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    t.vx(&["show", "--format", "json"]).assert_success();
    t.vx(&["show", "--format", "json", "--filter", "web..."]).assert_success();
    assert_transcript!(t);
}
