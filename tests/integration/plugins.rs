//! WebAssembly plugins, with components built from sources in the repo
//! (`scripts/build-plugins tests/plugins` and `scripts/build-plugins`):
//! reporters and cache backends end to end, grants and denials, limits
//! (CPU, memory), panics, garbage answers, pins, `vx plugin add` checks and
//! the compiled-component cache.

use std::path::PathBuf;

use crate::common::{TestEnv, project_toml};

/// A built component: `tests/plugins/dist/NAME.wasm` or `plugins/dist/NAME.wasm`.
pub(crate) fn component(name: &str) -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    for dir in ["tests/plugins/dist", "plugins/dist"] {
        let path = repo.join(dir).join(format!("{name}.wasm"));
        if path.is_file() {
            return path;
        }
    }
    panic!("{name}.wasm is not built; run scripts/build-plugins and scripts/build-plugins tests/plugins");
}

/// A workspace with `app#build` (prints and succeeds) and `lib#build`
/// (prints `oops` and exits 3), no plugin added.
pub(crate) fn app_ok_lib_failing() -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"app\", \"lib\"]\n");
    env.write("app/vx.toml", &project_toml("app", &[], &[("build", "echo built app", &[])]));
    env.write("lib/vx.toml", &project_toml("lib", &[], &[("build", "echo oops; exit 3", &[])]));
    env
}

/// [`app_ok_lib_failing`] with a commented root `vx.toml`, and the plugin
/// `kit` (testkit) added.
fn fixture() -> TestEnv {
    let env = app_ok_lib_failing();
    env.write("vx.toml", "# the workspace\n[workspace]\nprojects = [\"app\", \"lib\"] # two\n");
    let kit = component("testkit");
    env.vx(&["plugin", "add", kit.to_str().unwrap(), "--name", "kit"]).assert_success();
    env
}

/// Rewrites `[plugins.kit]` with `extra` lines and its `config` table.
fn configure(env: &TestEnv, config: &str, extra: &str) {
    let toml = env.read("vx.toml");
    let head = toml.split("[plugins.kit]").next().unwrap().to_string();
    env.write(
        "vx.toml",
        &format!("{head}[plugins.kit]\npath = \".vx/plugins/kit.wasm\"\n{extra}\n\n[plugins.kit.config]\n{config}\n"),
    );
}

fn report(env: &TestEnv) -> crate::common::Output {
    env.vx(&["run", "build", "--continue", "--report", "kit", "--report-file", "out.txt"])
}

#[test]
fn add_pins_copies_and_configures_keeping_comments() {
    let env = fixture();
    let toml = env.read("vx.toml");
    assert!(toml.contains("# the workspace") && toml.contains("# two"), "{toml}");
    assert!(toml.contains("[plugins.kit]\npath = \".vx/plugins/kit.wasm\""), "{toml}");
    let lock = env.read("vx.lock");
    let hash = blake3::hash(&std::fs::read(component("testkit")).unwrap()).to_hex().to_string();
    assert!(lock.contains(&format!("blake3 = \"{hash}\"")), "{lock}");
    assert!(lock.contains("exports = \"vx:plugin/report@0.1.0\""), "{lock}");
    assert!(env.root().join(".vx/plugins/kit.wasm").is_file());

    let list = env.vx(&["plugin", "list"]);
    list.assert_success();
    assert!(list.stdout.contains("pinned ok") && list.stdout.contains("compiled  yes"), "{list}");
    assert!(list.stdout.contains("not granted env=TESTKIT_SECRET, dirs=data"), "{list}");

    let again = env.vx(&["plugin", "add", component("testkit").to_str().unwrap(), "--name", "kit"]);
    again.assert_code(2);
    assert!(again.stderr.contains("--force"), "{again}");

    env.vx(&["plugin", "remove", "kit"]).assert_success();
    assert!(!env.read("vx.toml").contains("plugins.kit"));
    assert!(!env.read("vx.lock").contains("kit"));
    assert!(!env.root().join(".vx/plugins/kit.wasm").exists());
}

#[test]
fn add_prints_requests_that_are_not_granted_with_the_key() {
    let env = TestEnv::new();
    env.workspace(&[]);
    let out = env.vx(&["plugin", "add", component("testkit").to_str().unwrap(), "--env", "TESTKIT_SECRET"]);
    out.assert_success();
    assert!(out.stdout.contains("added `testkit`: reporter 0.1.0"), "{out}");
    assert!(out.stdout.contains("dirs=data: add \"data\" to `dirs` in [plugins.testkit]"), "{out}");
    assert!(!out.stdout.contains("env=TESTKIT_SECRET:"), "granted requests are not listed\n{out}");
    assert!(env.read("vx.toml").contains("env = [\"TESTKIT_SECRET\"]"));
}

#[test]
fn add_with_allow_clocks_writes_the_grant() {
    let env = TestEnv::new();
    env.workspace(&[]);
    let out = env.vx(&["plugin", "add", component("testkit").to_str().unwrap(), "--allow-clocks"]);
    out.assert_success();
    assert!(env.read("vx.toml").contains("allow-clocks = true"), "{}", env.read("vx.toml"));
    let list = env.vx(&["plugin", "list"]);
    assert!(list.stdout.contains("allow-clocks=true"), "{list}");
}

#[test]
fn reporter_plugin_renders_the_run_with_log_tails() {
    let env = fixture();
    let out = report(&env);
    out.assert_code(1);
    let text = env.read("out.txt");
    assert!(text.starts_with("testkit: 2 tasks\n"), "{text}");
    assert!(text.contains("app#build Status::Ok Tier::None tail=\n"), "{text}");
    assert!(text.contains("lib#build Status::Failed Tier::None tail=oops\n"), "{text}");
}

#[test]
fn junit_reporter_writes_to_stdout_without_a_file() {
    let env = fixture();
    env.vx(&["plugin", "add", component("junit").to_str().unwrap()]).assert_success();
    let out = env.vx(&["run", "build", "--continue", "--report", "junit"]);
    out.assert_code(1);
    assert!(out.stdout.contains("<testsuites"), "{out}");
    assert!(out.stdout.contains("oops"), "the failure's log tail\n{out}");
}

#[test]
fn markdown_is_built_in() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--continue", "--report", "markdown", "--report-file", "r.md"]);
    out.assert_code(1);
    let md = env.read("r.md");
    assert!(md.contains("| `app#build` | ok |"), "{md}");
    assert!(md.contains("### `lib#build`: failed (exit code 3)\n\n```text\noops\n```"), "{md}");
}

#[test]
fn an_unknown_reporter_is_a_usage_error_before_the_run() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--report", "nope"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("no reporter named `nope`") && out.stderr.contains("markdown, html, junit, kit"),
        "{out}"
    );
}

#[test]
fn an_endless_loop_is_stopped_by_the_cpu_budget() {
    let env = fixture();
    configure(&env, "mode = \"spin\"", "limits = { cpu = \"500ms\" }");
    let started = std::time::Instant::now();
    let out = report(&env);
    out.assert_code(1);
    assert!(out.stderr.contains("plugin `kit` failed in `render`"), "{out}");
    assert!(out.stderr.contains("CPU budget of 500ms") && out.stderr.contains("[plugins.kit].limits.cpu"), "{out}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn a_wall_clock_timeout_also_stops_it() {
    let env = fixture();
    configure(&env, "mode = \"spin\"", "limits = { call-timeout = \"300ms\" }");
    let out = report(&env);
    out.assert_code(1);
    assert!(out.stderr.contains("call timeout of 300ms") && out.stderr.contains("limits.call-timeout"), "{out}");
}

#[test]
fn allocating_a_gib_hits_the_memory_limit() {
    let env = fixture();
    configure(&env, "mode = \"alloc\"", "");
    let out = report(&env);
    out.assert_code(1);
    assert!(out.stderr.contains("memory limit 256 MiB exceeded"), "{out}");
    assert!(out.stderr.contains("[plugins.kit].limits.memory"), "{out}");
}

#[test]
fn a_panic_reaches_the_user_naming_the_plugin() {
    let env = fixture();
    configure(&env, "mode = \"panic\"", "");
    let out = report(&env);
    out.assert_code(1);
    assert!(out.stderr.contains("plugin `kit` failed in `render`: panicked at"), "{out}");
    assert!(out.stderr.contains("testkit was told to panic"), "{out}");
}

#[test]
fn an_error_value_and_a_bad_config_are_reported() {
    let env = fixture();
    configure(&env, "mode = \"fail\"", "");
    let out = report(&env);
    assert!(out.stderr.contains("plugin `kit` failed in `render`: testkit was told to fail"), "{out}");
    configure(&env, "colour = \"red\"", "");
    let out = report(&env);
    assert!(out.stderr.contains("invalid config") && out.stderr.contains("colour"), "{out}");
}

#[test]
fn env_is_granted_by_exact_name_only() {
    let env = fixture();
    configure(&env, "mode = \"env\"\nvar = \"LANG\"", "");
    report(&env).assert_code(1);
    assert_eq!(env.read("out.txt"), "env LANG=<unset>\n", "nothing is inherited");
    configure(&env, "mode = \"env\"\nvar = \"LANG\"", "env = [\"LANG\"]");
    report(&env).assert_code(1);
    assert_eq!(env.read("out.txt"), "env LANG=C\n");
    configure(&env, "mode = \"env\"\nvar = \"HOME\"", "env = [\"LANG\"]");
    report(&env).assert_code(1);
    assert_eq!(env.read("out.txt"), "env HOME=<unset>\n");
}

#[test]
fn dirs_are_preopened_read_only_unless_rw() {
    let env = fixture();
    env.write("data/in.txt", "hello");
    configure(&env, "mode = \"read\"\npath = \"data/in.txt\"", "");
    report(&env).assert_code(1);
    assert!(env.read("out.txt").starts_with("read failed"), "no dir without a grant: {}", env.read("out.txt"));
    configure(&env, "mode = \"read\"\npath = \"data/in.txt\"", "dirs = [\"data\"]");
    report(&env).assert_code(1);
    assert_eq!(env.read("out.txt"), "read ok: hello\n");
    configure(&env, "mode = \"read\"\npath = \"app/vx.toml\"", "dirs = [\"data\"]");
    report(&env).assert_code(1);
    assert!(env.read("out.txt").starts_with("read failed"), "{}", env.read("out.txt"));
    configure(&env, "mode = \"write\"\npath = \"data/out.txt\"", "dirs = [\"data\"]");
    report(&env).assert_code(1);
    assert!(env.read("out.txt").starts_with("write failed"), "{}", env.read("out.txt"));
    assert!(!env.root().join("data/out.txt").exists());
    configure(&env, "mode = \"write\"\npath = \"data/out.txt\"", "dirs = [{ path = \"data\", rw = true }]");
    report(&env).assert_code(1);
    assert_eq!(env.read("out.txt"), "write ok\n");
    assert_eq!(env.read("data/out.txt"), "written");
}

#[test]
fn a_dir_grant_outside_the_workspace_is_refused() {
    let env = fixture();
    configure(&env, "mode = \"list\"", "dirs = [\"../\"]");
    let out = report(&env);
    out.assert_code(2);
    assert!(out.stderr.contains("[plugins.kit].dirs") && out.stderr.contains("inside the workspace"), "{out}");
}

#[test]
fn plugin_warnings_are_shown_with_its_name() {
    let env = fixture();
    configure(&env, "mode = \"log\"", "");
    report(&env).assert_code(1);
    let out = report(&env);
    assert!(out.stderr.contains("vx: plugin `kit` warn: testkit says hello"), "{out}");
}

#[test]
fn a_tampered_plugin_is_refused_with_how_to_repin() {
    let env = fixture();
    let path = env.root().join(".vx/plugins/kit.wasm");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.push(0);
    std::fs::write(&path, bytes).unwrap();
    let out = report(&env);
    out.assert_code(2);
    assert!(out.stderr.contains("does not match its pin in vx.lock"), "{out}");
    assert!(out.stderr.contains("vx plugin add .vx/plugins/kit.wasm --name kit --force"), "{out}");
    assert!(env.vx(&["plugin", "list"]).stdout.contains("DOES NOT MATCH"));
    // The hint's command pins a file changed on purpose; this one was
    // damaged (cut short, for wasm), so it is refused.
    let repin = env.vx(&["plugin", "add", ".vx/plugins/kit.wasm", "--name", "kit", "--force"]);
    repin.assert_code(2);
    assert!(repin.error_line().contains("could not compile it"), "{repin}");
    let out = env.vx(&["plugin", "add", component("testkit").to_str().unwrap(), "--name", "kit", "--force"]);
    out.assert_success();
    report(&env).assert_code(1);
    assert!(env.read("out.txt").starts_with("testkit: 2 tasks"));
}

#[test]
fn a_core_module_is_refused_with_how_to_make_a_component() {
    let env = TestEnv::new();
    env.workspace(&[]);
    std::fs::write(env.root().join("core.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let out = env.vx(&["plugin", "add", "core.wasm"]);
    out.assert_code(2);
    assert!(out.stderr.contains("core WebAssembly module, not a component"), "{out}");
    assert!(out.stderr.contains("--target wasm32-wasip2"), "{out}");
    std::fs::write(env.root().join("text.wasm"), b"hello").unwrap();
    let out = env.vx(&["plugin", "add", "text.wasm"]);
    assert!(out.stderr.contains("not a WebAssembly file"), "{out}");
    assert!(!env.root().join("vx.lock").exists());
}

#[test]
fn a_truncated_compiled_artifact_is_compiled_again() {
    let env = fixture();
    let cache = env.root().parent().unwrap().join("home/.cache/vx/wasm");
    let artifacts: Vec<PathBuf> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(artifacts.len(), 1, "plugin add precompiles: {artifacts:?}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777, 0o700);
    let full = std::fs::metadata(&artifacts[0]).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&artifacts[0]).unwrap();
    file.set_len(full / 3).unwrap();
    drop(file);
    report(&env).assert_code(1);
    assert!(env.read("out.txt").starts_with("testkit: 2 tasks"));
    assert_eq!(std::fs::metadata(&artifacts[0]).unwrap().len(), full, "rewritten whole");
}

/// A workspace whose remote cache is the testcache plugin, storing in `store/`.
fn remote_fixture(mode: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"app\"]\n\n[cache]\nremote = \"tc\"\n");
    env.write(
        "app/vx.toml",
        "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = \"echo built; mkdir -p dist; echo out > dist/o.txt\"\noutputs = [\"dist/**\"]\n",
    );
    std::fs::create_dir_all(env.root().join("store")).unwrap();
    let tc = component("testcache");
    env.vx(&["plugin", "add", tc.to_str().unwrap(), "--name", "tc", "--dir", "store:rw"]).assert_success();
    let toml = env.read("vx.toml");
    env.write("vx.toml", &format!("{toml}\n[plugins.tc.config]\nmode = \"{mode}\"\n"));
    env
}

#[test]
fn a_cache_backend_is_the_remote_tier() {
    let env = remote_fixture("ok");
    let first = env.vx(&["run", "build"]);
    first.assert_success();
    assert_eq!(first.summary().cached, 0);
    assert_eq!(std::fs::read_dir(env.root().join("store")).unwrap().count(), 1, "uploaded\n{first}");
    std::fs::remove_dir_all(env.root().join(".vx/cache")).unwrap();
    std::fs::remove_dir_all(env.root().join("app/dist")).unwrap();
    let second = env.vx(&["run", "build", "--report", "markdown"]);
    second.assert_success();
    assert_eq!(second.summary().cached, 1, "{second}");
    assert!(second.stdout.contains("hit (remote)"), "{second}");
    assert_eq!(env.read("app/dist/o.txt"), "out\n");
    let third = env.vx(&["run", "build", "--report", "markdown", "--cache", "local:rw"]);
    assert!(third.stdout.contains("hit (local)"), "the remote hit was kept locally\n{third}");
}

#[test]
fn a_remote_returning_garbage_is_a_warning_and_a_miss() {
    let env = remote_fixture("ok");
    env.vx(&["run", "build"]).assert_success();
    std::fs::remove_dir_all(env.root().join(".vx/cache")).unwrap();
    let toml = env.read("vx.toml").replace("mode = \"ok\"", "mode = \"garbage\"");
    env.write("vx.toml", &toml);
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.summary().cached, 0);
    assert!(out.stderr.contains("the remote cache returned an invalid entry"), "{out}");
}

#[test]
fn a_remote_that_is_down_is_a_warning_not_a_failure() {
    let env = remote_fixture("down");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(out.stderr.contains("remote cache") && out.stderr.contains("testcache is down"), "{out}");
}

#[test]
fn plugin_new_scaffolds_a_crate() {
    let env = TestEnv::new();
    env.workspace(&[]);
    let out = env.vx(&["plugin", "new", "reporter", "my-report"]);
    out.assert_success();
    let lib = env.read("my-report/src/lib.rs");
    assert!(lib.contains("export_reporter!(MyReport);"), "{lib}");
    assert!(env.read("my-report/Cargo.toml").contains("crate-type = [\"cdylib\"]"));
    let out = env.vx(&["plugin", "new", "exporter", "x"]);
    out.assert_code(2);
    assert!(out.stderr.contains("reporter, cache-backend, executor, subscriber and command"), "{out}");
}
