//! Plugin errors: an unknown reporter, a plugin that fails, panics or
//! runs out of its budget (named, with the limit to raise), a bad config,
//! a grant outside the workspace, a tampered file (with how to pin it
//! again), and files that are not components.

use crate::common::snapshot::{Transcript, assert_transcript};
use crate::common::{TestEnv, project_toml};
use crate::plugins::component;

/// `app#build` succeeds, `lib#build` fails; the reporter plugin `kit`
/// (testkit) is added.
fn workspace(env: &TestEnv) -> Transcript<'_> {
    env.write("vx.toml", "[workspace]\nprojects = [\"app\", \"lib\"]\n");
    env.write("app/vx.toml", &project_toml("app", &[], &[("build", "echo built app", &[])]));
    env.write("lib/vx.toml", &project_toml("lib", &[], &[("build", "echo oops; exit 3", &[])]));
    let kit = component("testkit");
    env.vx(&["plugin", "add", kit.to_str().expect("a UTF-8 path"), "--name", "kit"]).assert_success();
    Transcript::new(env)
}

/// `[plugins.kit]` with `extra` lines and its `config` table.
fn configure(t: &mut Transcript<'_>, config: &str, extra: &str) {
    let toml = t.env().read("vx.toml");
    let head = toml.split("[plugins.kit]").next().expect("a first part").to_string();
    t.write(
        "vx.toml",
        &format!("{head}[plugins.kit]\npath = \".vx/plugins/kit.wasm\"\n{extra}\n\n[plugins.kit.config]\n{config}\n"),
    );
}

/// One slot keeps the order of the tasks' lines fixed.
const REPORT: [&str; 9] =
    ["run", "build", "--continue", "--concurrency", "1", "--report", "kit", "--report-file", "out.txt"];

#[test]
fn reporter_failures() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    t.vx(&["run", "build", "--report", "nope"]).assert_code(2);
    configure(&mut t, "mode = \"fail\"", "");
    t.vx(&REPORT).assert_code(1);
    configure(&mut t, "mode = \"spin\"", "limits = { cpu = \"500ms\" }");
    t.vx(&REPORT).assert_code(1);
    configure(&mut t, "mode = \"spin\"", "limits = { call-timeout = \"300ms\" }");
    t.vx(&REPORT).assert_code(1);
    configure(&mut t, "mode = \"alloc\"", "");
    t.vx(&REPORT).assert_code(1);
    configure(&mut t, "colour = \"red\"", "");
    t.vx(&REPORT).assert_code(1);
    configure(&mut t, "mode = \"list\"", "dirs = [\"../\"]");
    t.vx(&REPORT).assert_code(2);
    assert_transcript!(t);
}

#[test]
fn a_plugin_panic() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    configure(&mut t, "mode = \"panic\"", "");
    t.vx(&REPORT).assert_code(1);
    assert_transcript!(t);
}

#[test]
fn plugin_files() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    let path = env.path(".vx/plugins/kit.wasm");
    let mut bytes = std::fs::read(&path).expect("read the plugin");
    bytes.push(0);
    std::fs::write(&path, bytes).expect("tamper with the plugin");
    t.note("One byte appended to .vx/plugins/kit.wasm.");
    t.vx(&REPORT).assert_code(2);
    t.vx(&["plugin", "list"]).assert_success();
    std::fs::write(env.path("core.wasm"), b"\0asm\x01\0\0\0").expect("write a core module");
    t.note("core.wasm: a core WebAssembly module (no component).");
    t.vx(&["plugin", "add", "core.wasm"]).assert_code(2);
    std::fs::write(env.path("text.wasm"), b"hello").expect("write a text file");
    t.note("text.wasm: the bytes `hello`.");
    t.vx(&["plugin", "add", "text.wasm"]).assert_code(2);
    assert_transcript!(t);
}
