//! The `http-cache` plugin against the real `turborepo-remote-cache`
//! server from npm: started here on 127.0.0.1 and a free port, with local
//! storage in the test's temporary directory. `scripts/test` installs the
//! server and points `VX_TEST_TURBO_CACHE` at its `cli.js`.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Output, TestEnv};
use crate::plugins::component;

/// The token the server accepts.
const TOKEN: &str = "vx-test-token";
/// The team every artifact is stored under.
const TEAM: &str = "vxteam";

/// The server's `cli.js`: `$VX_TEST_TURBO_CACHE`, else where `scripts/test`
/// installs it. A missing server fails the test; it is never skipped.
fn server_script() -> PathBuf {
    let path = match std::env::var_os("VX_TEST_TURBO_CACHE").filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/vx/turborepo-remote-cache-2.12.0/node_modules/turborepo-remote-cache/dist/cli.js"),
    };
    assert!(
        path.is_file(),
        "turborepo-remote-cache is not installed (looked for {}); run scripts/test, which installs it with \
         `npm install --prefix`, or point VX_TEST_TURBO_CACHE at its dist/cli.js",
        path.display()
    );
    path
}

/// A running `turborepo-remote-cache`, killed on drop.
struct Server {
    child: Option<Child>,
    port: u16,
    storage: PathBuf,
    log: PathBuf,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let storage = dir.join("trc-storage");
        let log = dir.join("trc.log");
        std::fs::create_dir_all(&storage).unwrap();
        let out = std::fs::File::create(&log).unwrap();
        #[expect(clippy::disallowed_methods, reason = "the test starts the cache server itself, outside any task")]
        let mut cmd = Command::new("node");
        cmd.arg(server_script())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir)
            .env("HOST", "127.0.0.1")
            .env("PORT", port.to_string())
            .env("STORAGE_PROVIDER", "local")
            .env("STORAGE_PATH", &storage)
            .env("STORAGE_PATH_USE_TMP_FOLDER", "false")
            .env("TURBO_TOKEN", TOKEN)
            .env("LOG_LEVEL", "warn")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        let child = cmd.spawn().unwrap_or_else(|e| panic!("start node (is Node.js installed?): {e}"));
        let mut server = Server { child: Some(child), port, storage, log };
        server.wait_listening();
        server
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let exited = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                panic!(
                    "turborepo-remote-cache did not listen on port {} ({exited:?}):\n{}",
                    self.port,
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The artifacts the server holds for the team.
    fn artifacts(&self) -> usize {
        std::fs::read_dir(self.storage.join(TEAM)).map_or(0, |d| d.count())
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Three projects whose `build` writes `dist/`, and http-cache as the
/// remote tier granted `TURBO_TOKEN` and `allow` as its host.
fn fixture(server: &Server, allow: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"a\", \"b\", \"c\"]\n\n[cache]\nremote = \"http-cache\"\n");
    for p in ["a", "b", "c"] {
        env.write(
            &format!("{p}/vx.toml"),
            &format!(
                "[project]\nname = \"{p}\"\n\n[tasks.build]\ncommand = \"echo built {p}; mkdir -p dist; echo {p} > dist/out.txt\"\noutputs = [\"dist/**\"]\n"
            ),
        );
    }
    let wasm = component("http-cache");
    let add = env.vx(&["plugin", "add", wasm.to_str().unwrap(), "--env", "TURBO_TOKEN", "--allow-host", allow]);
    add.assert_success();
    let toml = env.read("vx.toml");
    env.write(
        "vx.toml",
        &format!("{toml}\n[plugins.http-cache.config]\nurl = \"{}\"\nteam-id = \"{TEAM}\"\n", server.url()),
    );
    env
}

fn run(env: &TestEnv, token: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", "build", "--report", "markdown"];
    args.extend_from_slice(extra);
    env.vx_command(&args).env("TURBO_TOKEN", token).output()
}

/// Forgets everything local: the cache and the outputs.
fn forget_local(env: &TestEnv) {
    std::fs::remove_dir_all(env.root().join(".vx/cache")).unwrap();
    for p in ["a", "b", "c"] {
        std::fs::remove_dir_all(env.root().join(format!("{p}/dist"))).unwrap();
    }
}

#[test]
fn a_run_fills_the_remote_and_an_empty_local_cache_restores_from_it() {
    let server = Server::start(TestEnv::new().root());
    let env = fixture(&server, &server.url());
    let first = run(&env, TOKEN, &[]);
    first.assert_success();
    assert_eq!(first.summary().cached, 0, "{first}");
    assert!(!first.stderr.contains("warning"), "{first}");
    assert_eq!(server.artifacts(), 3, "every task uploaded\n{first}");

    forget_local(&env);
    let second = run(&env, TOKEN, &[]);
    second.assert_success();
    assert_eq!(second.summary().cached, 3, "{second}");
    assert_eq!(second.stdout.matches("hit (remote)").count(), 3, "{second}");
    for p in ["a", "b", "c"] {
        assert_eq!(env.read(&format!("{p}/dist/out.txt")), format!("{p}\n"));
    }
    let third = run(&env, TOKEN, &["--cache", "local:rw"]);
    assert_eq!(third.stdout.matches("hit (local)").count(), 3, "remote hits were written locally\n{third}");
}

#[test]
fn a_read_only_remote_is_never_written() {
    let server = Server::start(TestEnv::new().root());
    let env = fixture(&server, &server.url());
    let out = run(&env, TOKEN, &["--cache", "local:rw,remote:r"]);
    out.assert_success();
    assert_eq!(out.summary().run, 3, "{out}");
    assert_eq!(server.artifacts(), 0, "remote:r uploads nothing\n{out}");
    forget_local(&env);
    let again = run(&env, TOKEN, &["--cache", "local:rw,remote:r"]);
    assert_eq!(again.summary().cached, 0, "{again}");
    assert_eq!(server.artifacts(), 0, "{again}");
}

#[test]
fn a_bad_token_is_a_warning_and_a_miss() {
    let server = Server::start(TestEnv::new().root());
    let env = fixture(&server, &server.url());
    run(&env, TOKEN, &[]).assert_success();
    forget_local(&env);
    let out = run(&env, "not-the-token", &[]);
    out.assert_success();
    assert_eq!(out.summary().cached, 0, "{out}");
    assert!(out.stderr.contains("vx: warning: remote cache lookup failed (treated as a miss)"), "{out}");
    assert!(out.stderr.contains("refused the token (401)"), "{out}");
}

#[test]
fn a_stopped_server_is_a_warning_and_a_miss() {
    let mut server = Server::start(TestEnv::new().root());
    let env = fixture(&server, &server.url());
    run(&env, TOKEN, &[]).assert_success();
    server.stop();
    forget_local(&env);
    let out = run(&env, TOKEN, &[]);
    out.assert_success();
    assert_eq!(out.summary().cached, 0, "{out}");
    assert!(out.stderr.contains("remote cache lookup failed") && out.stderr.contains("connection refused"), "{out}");
    assert_eq!(env.read("a/dist/out.txt"), "a\n", "the task ran");
}

#[test]
fn a_host_outside_allow_hosts_is_denied_naming_the_key() {
    let server = Server::start(TestEnv::new().root());
    let env = fixture(&server, "http://127.0.0.1:1");
    let out = run(&env, TOKEN, &[]);
    out.assert_success();
    assert_eq!(server.artifacts(), 0, "nothing left the process\n{out}");
    let want = format!("add \"{}\" to [plugins.http-cache].allow-hosts in vx.toml", server.url());
    assert!(out.stderr.contains(&want), "{out}");
    assert!(out.stderr.contains("not in this plugin's `allow-hosts` grant"), "{out}");
}

#[test]
fn a_token_that_is_not_granted_is_denied_naming_env() {
    let server = Server::start(TestEnv::new().root());
    let env = fixture(&server, &server.url());
    let toml = env.read("vx.toml").replace("env = [\"TURBO_TOKEN\"]", "env = []");
    env.write("vx.toml", &toml);
    let out = run(&env, TOKEN, &[]);
    out.assert_success();
    assert!(out.stderr.contains("denied: the token variable TURBO_TOKEN is not set or not granted"), "{out}");
    assert!(out.stderr.contains("env = [\"TURBO_TOKEN\"]"), "{out}");
    assert_eq!(server.artifacts(), 0, "{out}");
}
