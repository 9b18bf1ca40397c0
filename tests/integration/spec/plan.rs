//! The plan views that run nothing: `vx run --dry` as text and as JSON,
//! and `--graph` in DOT.

use crate::common::snapshot::{Transcript, assert_transcript};
use crate::common::{TestEnv, log_cmd, project_toml};

/// ui ← web (web#build: ^build, codegen, shared#gen with inputs, outputs,
/// env and a timeout), shared#gen, and an unrelated project `other`; the
/// transcript shows web's configuration.
pub(super) fn workspace(env: &TestEnv) -> Transcript<'_> {
    let mut t = Transcript::new(env);
    env.workspace(&["packages/*"]);
    env.write("packages/ui/vx.toml", &project_toml("ui", &[], &[("build", &log_cmd("ui#build"), &[])]));
    env.write("packages/shared/vx.toml", &project_toml("shared", &[], &[("gen", &log_cmd("shared#gen"), &[])]));
    env.write("packages/other/vx.toml", &project_toml("other", &[], &[("build", &log_cmd("other#build"), &[])]));
    t.show_file("vx.toml");
    t.write(
        "packages/web/vx.toml",
        &format!(
            "[project]\nname = \"web\"\ndepends-on = [\"ui\"]\ntags = [\"app\"]\n\n\
             [tasks.codegen]\ncommand = [\"printf\", \"%s\", \"gen\"]\n\n\
             [tasks.build]\ncommand = {:?}\ndepends-on = [\"^build\", \"codegen\", \"shared#gen\"]\n\
             inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\nenv = [\"NODE_ENV\"]\ntimeout = \"90s\"\n",
            log_cmd("web#build")
        ),
    );
    t
}

#[test]
fn dry_text() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    t.vx(&["run", "web#build", "--dry"]).assert_success();
    t.vx(&["run", "web#build", "--dry", "--verbose"]).assert_success();
    t.vx(&["run", "build", "--dry=text", "--filter", "other"]).assert_success();
    assert!(env.log().is_empty(), "--dry runs nothing");
    assert_transcript!(t);
}

#[test]
fn dry_json() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    t.vx(&["run", "web#build", "--dry=json"]).assert_success();
    assert!(env.log().is_empty(), "--dry runs nothing");
    assert_transcript!(t);
}

#[test]
fn graph_dot() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    t.vx(&["run", "web#build", "--graph"]).assert_success();
    t.vx(&["run", "web#build", "--graph=graph.dot"]).assert_success();
    t.show_file("graph.dot");
    assert!(env.log().is_empty(), "--graph runs nothing");
    assert_transcript!(t);
}
