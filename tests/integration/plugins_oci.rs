//! Plugins through an OCI registry: a real CNCF distribution registry
//! (Debian's `docker-registry`, installed by `scripts/test`) started here
//! on 127.0.0.1 with HTTPS from a throwaway CA (openssl) and htpasswd
//! authentication. One workspace publishes a first-party component, a
//! second adds it by tag and by digest and runs it; a tampered layer, a
//! wrong digest, an untrusted CA and missing credentials are refused.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Output, TestEnv};
use crate::plugins::{app_ok_lib_failing, component};

const USER: &str = "platform";
const PASSWORD: &str = "vx-test-pass";
/// bcrypt (cost 4, which the registry accepts) of `PASSWORD`, as
/// `htpasswd -B` writes it; fixed so the tests need no htpasswd tool.
const HTPASSWD: &str = "platform:$2b$04$ORcxhwYPnkehuOzk46okHOu3jNO757nZUow1q4/7EUxedV3D4ZHgG\n";

/// A running registry, killed on drop; its storage and CA in `dir`.
struct Registry {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Registry {
    fn start(dir: &Path) -> Registry {
        let dir = dir.to_path_buf();
        make_ca(&dir);
        std::fs::write(dir.join("htpasswd"), HTPASSWD).unwrap();
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let d = dir.display();
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {d}/storage\n\
             http:\n  addr: 127.0.0.1:{port}\n  tls:\n    certificate: {d}/server.pem\n    key: {d}/server.key\n\
             auth:\n  htpasswd:\n    realm: vx-test\n    path: {d}/htpasswd\n"
        );
        std::fs::write(dir.join("config.yml"), config).unwrap();
        let log = std::fs::File::create(dir.join("registry.log")).unwrap();
        #[expect(clippy::disallowed_methods, reason = "the test starts the registry itself, outside any task")]
        let mut cmd = Command::new(registry_bin());
        cmd.arg("serve")
            .arg(dir.join("config.yml"))
            .env_clear()
            .env("HOME", &dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        let child = cmd.spawn().unwrap_or_else(|e| panic!("start docker-registry: {e}"));
        let mut registry = Registry { child: Some(child), port, dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            let exited = registry.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                panic!(
                    "docker-registry did not listen on {port} ({exited:?}):\n{}",
                    std::fs::read_to_string(registry.dir.join("registry.log")).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `oci://127.0.0.1:PORT/REPO`.
    fn reference(&self, repo: &str) -> String {
        format!("oci://127.0.0.1:{}/{repo}", self.port)
    }

    fn ca(&self) -> String {
        self.dir.join("ca.pem").display().to_string()
    }

    /// The stored bytes of blob `digest` (`sha256:HEX`).
    fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir.join("storage/docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn registry_bin() -> PathBuf {
    let bin = PathBuf::from("/usr/bin/docker-registry");
    assert!(bin.is_file(), "docker-registry is not installed; run scripts/test (apt-get install docker-registry)");
    bin
}

/// A CA and a server certificate for 127.0.0.1 signed by it.
fn make_ca(dir: &Path) {
    let run = |args: &[&str]| {
        #[expect(clippy::disallowed_methods, reason = "openssl makes the test CA, outside any task")]
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl is installed");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=vx oci test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
        .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.pem",
    ]);
}

/// `vx ARGS` trusting the registry's CA, with `vars` set.
fn vx(env: &TestEnv, registry: &Registry, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.vx_command(args).env("VX_REGISTRY_CA_FILE", &registry.ca());
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    cmd.output()
}

const CREDENTIALS: [(&str, &str); 2] = [("VX_REGISTRY_USERNAME", USER), ("VX_REGISTRY_PASSWORD", PASSWORD)];

/// Publishes junit to `repo:1.0.0`; returns the printed digest reference.
fn publish(registry: &Registry, repo: &str) -> String {
    let platform = app_ok_lib_failing();
    let junit = component("junit");
    let target = format!("{}:1.0.0", registry.reference(repo));
    let out = vx(&platform, registry, &["plugin", "publish", junit.to_str().unwrap(), &target], &CREDENTIALS);
    out.assert_success();
    assert!(out.stdout.contains("published reporter"), "{out}");
    let pinned = out.stdout.lines().last().unwrap().to_string();
    assert!(pinned.starts_with(&format!("{target}@sha256:")), "{out}");
    pinned
}

/// Writes the Docker credential file `docker login` would, in the test's HOME.
fn docker_login(env: &TestEnv, registry: &Registry) {
    // base64 of `platform:vx-test-pass`, as `docker login` stores it.
    let auth = "cGxhdGZvcm06dngtdGVzdC1wYXNz";
    let host = format!("127.0.0.1:{}", registry.port);
    let home = env.root().join("../home");
    std::fs::create_dir_all(home.join(".docker")).unwrap();
    std::fs::write(home.join(".docker/config.json"), format!(r#"{{"auths":{{"{host}":{{"auth":"{auth}"}}}}}}"#))
        .unwrap();
}

#[test]
fn a_published_plugin_is_added_by_tag_and_by_digest_in_another_app_ok_lib_failing() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = Registry::start(tmp.path());
    let pinned = publish(&registry, "platform/junit");
    let digest = pinned.rsplit_once('@').unwrap().1.to_string();

    // The second workspace logs in the Docker way and adds by tag.
    let env = app_ok_lib_failing();
    docker_login(&env, &registry);
    let tag = format!("{}:1.0.0", registry.reference("platform/junit"));
    let out = vx(&env, &registry, &["plugin", "add", &tag], &[]);
    out.assert_success();
    assert!(out.stdout.contains("added `junit`: reporter"), "{out}");
    assert!(out.stdout.contains(&format!("from {pinned}")), "{out}");
    let lock = env.read("vx.lock");
    assert!(lock.contains(&format!("source = \"{tag}\"")), "{lock}");
    assert!(lock.contains(&format!("source-digest = \"{digest}\"")), "{lock}");
    let hash = blake3::hash(&std::fs::read(component("junit")).unwrap()).to_hex().to_string();
    assert!(lock.contains(&format!("blake3 = \"{hash}\"")), "the pulled bytes are the published ones\n{lock}");
    let run = env.vx(&["run", "build", "--continue", "--report", "junit"]);
    run.assert_code(1);
    assert!(run.stdout.contains("<testsuites") && run.stdout.contains("oops"), "{run}");

    // By digest, under another name, in a third workspace.
    let other = app_ok_lib_failing();
    docker_login(&other, &registry);
    let by_digest = format!("{}@{digest}", registry.reference("platform/junit"));
    let out = vx(&other, &registry, &["plugin", "add", &by_digest, "--name", "tests"], &[]);
    out.assert_success();
    assert!(other.read("vx.lock").contains(&format!("source-digest = \"{digest}\"")));
    other.vx(&["run", "build", "--continue", "--report", "tests"]).assert_code(1);

    // Publishing the same bytes again sends no blob twice and still works.
    publish(&registry, "platform/junit");
}

#[test]
fn a_tampered_layer_is_refused_and_nothing_is_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = Registry::start(tmp.path());
    publish(&registry, "platform/junit");
    let junit = std::fs::read(component("junit")).unwrap();
    let layer = registry.blob_path(&format!("sha256:{}", sha256_hex(&junit)));
    let mut bytes = std::fs::read(&layer).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&layer, bytes).unwrap();

    let env = app_ok_lib_failing();
    let tag = format!("{}:1.0.0", registry.reference("platform/junit"));
    let out = vx(&env, &registry, &["plugin", "add", &tag], &CREDENTIALS);
    out.assert_code(1);
    let line = out.error_line();
    assert!(line.contains("does not match its digest") && line.contains("nothing was installed"), "{out}");
    assert_eq!(out.stderr.trim().lines().count(), 1, "one line\n{out}");
    assert!(!env.root().join("vx.lock").exists() && !env.read("vx.toml").contains("plugins"), "{out}");
    assert!(!env.root().join(".vx/plugins/junit.wasm").exists());
}

#[test]
fn a_wrong_digest_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = Registry::start(tmp.path());
    let pinned = publish(&registry, "platform/junit");
    let digest = pinned.rsplit_once('@').unwrap().1.to_string();
    let env = app_ok_lib_failing();

    let absent = format!("{}@sha256:{}", registry.reference("platform/junit"), "0".repeat(64));
    let out = vx(&env, &registry, &["plugin", "add", &absent], &CREDENTIALS);
    out.assert_code(1);
    assert!(out.error_line().contains("not found"), "a digest the registry does not have\n{out}");

    // The registry answers for the digest with other bytes (its stored
    // manifest altered, same length, still valid): refused. (By tag there
    // is nothing to compare a manifest with: a tag is what the registry
    // says it is, which is why `vx.lock` pins the digest it resolved to.)
    let manifest = registry.blob_path(&digest);
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replacen("image.title", "image.TITLE", 1)).unwrap();
    let by_digest = format!("{}@{digest}", registry.reference("platform/junit"));
    let out = vx(&env, &registry, &["plugin", "add", &by_digest], &CREDENTIALS);
    out.assert_code(1);
    let line = out.error_line();
    assert!(line.contains("the manifest of") && line.contains("does not match its digest"), "{out}");
    assert!(line.contains(&format!("expected {digest}")), "{out}");
    assert_eq!(out.stderr.trim().lines().count(), 1, "one line\n{out}");
    assert!(!env.root().join("vx.lock").exists(), "{out}");

    let bad = vx(&env, &registry, &["plugin", "add", "oci://127.0.0.1/platform/junit@sha256:abc"], &[]);
    bad.assert_code(2);
    assert!(bad.error_line().contains("is not a digest"), "{bad}");
}

#[test]
fn an_untrusted_ca_and_missing_credentials_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = Registry::start(tmp.path());
    let env = app_ok_lib_failing();
    let tag = format!("{}:1.0.0", registry.reference("platform/junit"));
    let junit = component("junit");

    let out = env.vx_command(&["plugin", "publish", junit.to_str().unwrap(), &tag]).output();
    out.assert_code(1);
    assert!(out.error_line().contains("could not reach 127.0.0.1"), "{out}");
    assert!(out.error_line().contains("VX_REGISTRY_CA_FILE"), "the hint names the fix\n{out}");
    assert_eq!(out.stderr.trim().lines().count(), 1, "one line\n{out}");

    let out = vx(&env, &registry, &["plugin", "publish", junit.to_str().unwrap(), &tag], &[]);
    out.assert_code(1);
    assert!(out.error_line().contains("refused the credentials (401)"), "{out}");
    assert!(out.error_line().contains("VX_REGISTRY_TOKEN"), "{out}");

    let wrong = [("VX_REGISTRY_USERNAME", USER), ("VX_REGISTRY_PASSWORD", "nope")];
    let out = vx(&env, &registry, &["plugin", "publish", junit.to_str().unwrap(), &tag], &wrong);
    out.assert_code(1);
    assert!(out.error_line().contains("refused the credentials"), "{out}");
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(bytes))
}
