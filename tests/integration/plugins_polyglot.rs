//! Reporters written in Python and JavaScript (`examples/plugins/`, built
//! by `scripts/build-polyglot-plugins` with componentize-py and
//! componentize-js), loaded by the real vx like any Rust plugin: what they
//! render from a run, the cache tier of a replayed task, their config
//! option through `host.config`, an `invalid-config` error raised or
//! thrown in the guest language, and their `host.log` record.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Output, TestEnv, project_toml, vx_bin};

/// A built component in `examples/plugins/dist/`.
fn component(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/plugins/dist").join(format!("{name}.wasm"));
    assert!(path.is_file(), "{name}.wasm is not built; run scripts/build-polyglot-plugins");
    path
}

/// A workspace with `app#build` (succeeds, cached), `lib#build` (prints
/// `oops`, exits 3) and `web#build` (depends on `lib#build`, so it is
/// skipped), and the component `file` added as the reporter `name`. The
/// limits are the defaults: both runtimes fit in 256 MiB of memory.
fn fixture(file: &str, name: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["app", "lib", "web"]);
    env.write(
        "app/vx.toml",
        "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = \"echo built app\"\ncache = true\n",
    );
    env.write("lib/vx.toml", &project_toml("lib", &[], &[("build", "echo oops; exit 3", &[])]));
    env.write("web/vx.toml", &project_toml("web", &["lib"], &[("build", "echo built web", &["^build"])]));
    let add = env.vx(&["plugin", "add", component(file).to_str().unwrap(), "--name", name]);
    add.assert_success();
    assert!(add.stdout.contains(&format!("added `{name}`: reporter 0.1.0")), "{add}");
    env
}

/// Appends `[plugins.NAME.config]` with `lines` to `vx.toml`, replacing
/// one written before.
fn configure(env: &TestEnv, name: &str, lines: &str) {
    let header = format!("\n[plugins.{name}.config]\n");
    let toml = env.read("vx.toml");
    let head = toml.split(&header).next().unwrap().to_string();
    env.write("vx.toml", &format!("{head}{header}{lines}\n"));
}

/// `vx run build --report NAME --report-file out` with the plugin's info
/// records shown; after `lib#build` fails, `app#build` still runs and
/// `web#build` is skipped.
fn report(env: &TestEnv, name: &str) -> Output {
    let args = ["run", "build", "--continue=dependents-ok", "--report", name, "--report-file", "out"];
    env.tool_in(".", vx_bin(), &args, &[("VX_PLUGIN_LOG", "1")])
}

fn json_report(env: &TestEnv) -> Value {
    let text = env.read("out");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("the report is not JSON ({e}):\n{text}"))
}

/// The entry of task `id` in the Python reporter's `tasks` list.
fn entry<'a>(doc: &'a Value, id: &str) -> &'a Value {
    let tasks = doc["tasks"].as_array().expect("a tasks list");
    tasks.iter().find(|t| t["id"] == id).unwrap_or_else(|| panic!("no {id} in {doc:#}"))
}

#[test]
fn python_reporter_renders_the_run_as_json_with_the_cache_tier() {
    let env = fixture("py-json", "py");
    let first = report(&env, "py");
    first.assert_code(1);
    assert!(first.stderr.contains("vx: plugin `py` info: rendered the run as JSON tasks=3 listed=3"), "{first}");
    let doc = json_report(&env);
    assert_eq!(doc["totals"]["tasks"], 3, "{doc:#}");
    assert_eq!(doc["totals"]["status"]["ok"], 1, "{doc:#}");
    assert_eq!(doc["totals"]["status"]["failed"], 1, "{doc:#}");
    assert_eq!(doc["totals"]["status"]["skipped"], 1, "{doc:#}");
    assert!(doc["argv"].as_array().unwrap().iter().any(|a| a == "--report"), "{doc:#}");
    assert_eq!(doc["vx_version"], env!("CARGO_PKG_VERSION"), "{doc:#}");
    let app = entry(&doc, "app#build");
    assert_eq!((&app["project"], &app["task"], &app["status"]), (&"app".into(), &"build".into(), &"ok".into()));
    assert_eq!(app["cache"], "none", "{doc:#}");
    let lib = entry(&doc, "lib#build");
    assert_eq!((&lib["status"], &lib["exit_code"]), (&"failed".into(), &3.into()), "{doc:#}");
    assert_eq!(lib["message"], "exit code 3", "{doc:#}");
    assert!(lib["log_tail"].as_str().unwrap().contains("oops"), "{doc:#}");
    let web = entry(&doc, "web#build");
    assert_eq!(web["status"], "skipped", "{doc:#}");
    assert!(web["message"].as_str().unwrap().contains("lib#build"), "the skip reason\n{doc:#}");

    report(&env, "py").assert_code(1);
    let doc = json_report(&env);
    assert_eq!(entry(&doc, "app#build")["cache"], "local", "replayed from the local cache\n{doc:#}");
    assert_eq!(entry(&doc, "lib#build")["cache"], "none", "a failure is not cached\n{doc:#}");
    assert_eq!(doc["totals"]["cache"]["local"], 1, "{doc:#}");
}

#[test]
fn python_reporter_config_lists_failures_only_and_a_bad_key_is_an_error() {
    let env = fixture("py-json", "py");
    configure(&env, "py", "failures-only = true");
    let out = report(&env, "py");
    out.assert_code(1);
    assert!(out.stderr.contains("tasks=3 listed=2"), "{out}");
    let doc = json_report(&env);
    assert_eq!(doc["failures_only"], true, "{doc:#}");
    assert_eq!(doc["totals"]["tasks"], 3, "the totals count every task\n{doc:#}");
    let ids: Vec<&str> = doc["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{doc:#}");
    assert!(ids.contains(&"lib#build") && ids.contains(&"web#build"), "{doc:#}");

    configure(&env, "py", "colour = \"red\"");
    let out = report(&env, "py");
    out.assert_code(1);
    assert!(out.stderr.contains("plugin `py` failed in `render`"), "{out}");
    assert!(out.stderr.contains("unknown key `colour`; the only key is `failures-only`"), "{out}");
}

/// The TAP test point of task `id` and the YAML block under it (the lines
/// up to the next test point).
fn tap_point<'a>(tap: &'a str, id: &str) -> (&'a str, Vec<&'a str>) {
    let mut lines = tap.lines().skip_while(|l| !(l.starts_with("ok ") || l.starts_with("not ok ")) || !l.contains(id));
    let point = lines.next().unwrap_or_else(|| panic!("no test point for {id}:\n{tap}"));
    let block = lines.take_while(|l| l.starts_with("  ")).collect();
    (point, block)
}

#[test]
fn js_reporter_renders_the_run_as_tap_with_the_cache_tier() {
    let env = fixture("js-tap", "tap");
    let first = report(&env, "tap");
    first.assert_code(1);
    assert!(
        first.stderr.contains("vx: plugin `tap` info: rendered the run as TAP tasks=3 diagnostics=true"),
        "{first}"
    );
    let tap = env.read("out");
    assert!(tap.starts_with("TAP version 14\n# vx "), "{tap}");
    assert!(tap.contains("\n1..3\n") && tap.ends_with("# tasks 3, failed 1\n"), "{tap}");
    let (app, block) = tap_point(&tap, "app#build");
    assert!(app.starts_with("ok ") && app.ends_with(" - app#build"), "{tap}");
    assert!(block.contains(&"  status: ok") && block.contains(&"  cache: none"), "{tap}");
    let (lib, block) = tap_point(&tap, "lib#build");
    assert!(lib.starts_with("not ok ") && lib.ends_with(" - lib#build"), "{tap}");
    assert!(block.contains(&"  exit_code: 3") && block.contains(&"  message: \"exit code 3\""), "{tap}");
    assert!(block.contains(&"  log_tail: |-") && block.contains(&"    oops"), "{tap}");
    let (web, _) = tap_point(&tap, "web#build");
    assert!(web.starts_with("ok ") && web.contains(" - web#build # SKIP ") && web.contains("lib#build"), "{tap}");

    report(&env, "tap").assert_code(1);
    let tap = env.read("out");
    let (app, block) = tap_point(&tap, "app#build");
    assert!(app.ends_with(" - app#build (cached: local)"), "replayed from the local cache\n{tap}");
    assert!(block.contains(&"  cache: local"), "{tap}");
}

#[test]
fn js_reporter_config_drops_diagnostics_and_a_bad_key_is_an_error() {
    let env = fixture("js-tap", "tap");
    configure(&env, "tap", "diagnostics = false");
    let out = report(&env, "tap");
    out.assert_code(1);
    assert!(out.stderr.contains("diagnostics=false"), "{out}");
    let tap = env.read("out");
    assert!(tap.contains(" - lib#build\n"), "{tap}");
    assert!(!tap.contains("  ---") && !tap.contains("oops"), "no YAML blocks\n{tap}");

    configure(&env, "tap", "colour = \"red\"");
    let out = report(&env, "tap");
    out.assert_code(1);
    assert!(out.stderr.contains("plugin `tap` failed in `render`"), "{out}");
    assert!(out.stderr.contains("unknown key `colour`; the only key is `diagnostics`"), "{out}");
}
