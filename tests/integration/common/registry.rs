//! A real npm registry holding vx's npm packages, for `npm_packages.rs`.
//!
//! The packages are what `scripts/package-npm` makes of the vx binary
//! under test (the launcher `@vx-dev/cli` and this platform's
//! `@vx-dev/cli-linux-*`), published once per binary into a verdaccio
//! storage kept beside it (`<target>/<profile>/npm-registry-KEY/`). Each
//! test then starts its own verdaccio on 127.0.0.1, on a free port, over
//! a copy of that storage (hard links) with a throwaway config whose
//! uplinks are off: whatever is not published there is a 404, and
//! nothing goes to the network.
//!
//! verdaccio comes from `scripts/install-verdaccio`, found through
//! `VX_TEST_VERDACCIO` (`scripts/test` sets it) or where that script puts
//! it; a missing one fails the test with the command to run.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use nix::fcntl::{Flock, FlockArg};

use super::process::poll;
use super::vx_bin;

/// The version of verdaccio that `scripts/install-verdaccio` installs.
const VERDACCIO_VERSION: &str = "6.8.0";

/// A running verdaccio, stopped when dropped.
#[derive(Debug)]
pub(crate) struct Registry {
    child: Child,
    url: String,
    version: String,
}

impl Registry {
    /// Starts a registry holding vx's packages, its storage and config in `dir`.
    pub(crate) fn start(dir: &Path) -> Registry {
        let published = published_storage();
        let storage = dir.join("storage");
        copy_linked(&published.join("storage"), &storage);
        let (child, url) = serve(dir, &storage);
        let version = std::fs::read_to_string(published.join("version")).expect("the packages' version");
        Registry { child, url, version: version.trim().to_string() }
    }

    /// `http://127.0.0.1:PORT/`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The version every package was published at (vx's own).
    pub(crate) fn version(&self) -> &str {
        &self.version
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn verdaccio() -> PathBuf {
    let path = match std::env::var_os("VX_TEST_VERDACCIO").filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(format!(".cache/vx/verdaccio-{VERDACCIO_VERSION}/node_modules/verdaccio/bin/verdaccio")),
    };
    assert!(
        path.is_file(),
        "verdaccio is not installed (looked for {}); run scripts/install-verdaccio (scripts/test does), \
         or point VX_TEST_VERDACCIO at its bin/verdaccio",
        path.display()
    );
    path
}

/// Starts verdaccio over `storage` on a free port; waits until it answers.
fn serve(dir: &Path, storage: &Path) -> (Child, String) {
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let config = dir.join("verdaccio.yaml");
    // No uplinks: a package that is not in the storage is a 404, never a
    // fetch from the public registry. Anyone may publish (the token the
    // publishing npm sends is not checked). The binary is tens of MB.
    let yaml = format!(
        "storage: {storage}\nauth:\n  htpasswd:\n    file: {dir}/htpasswd\n    max_users: -1\nuplinks: {{}}\n\
         packages:\n  '**':\n    access: $all\n    publish: $all\nmax_body_size: 500mb\n\
         listen: 127.0.0.1:{port}\nlog: {{ type: stdout, format: pretty, level: warn }}\n",
        storage = storage.display(),
        dir = dir.display(),
    );
    std::fs::write(&config, yaml).expect("write verdaccio's config");
    let log = File::create(dir.join("verdaccio.log")).expect("create verdaccio's log");
    #[expect(clippy::disallowed_methods, reason = "the tests start their servers directly")]
    let child = Command::new("node")
        .arg(verdaccio())
        .arg("--config")
        .arg(&config)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
        .env("HOME", dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("clone the log handle"))
        .stderr(log)
        .spawn()
        .expect("start verdaccio (node on PATH)");
    let up = poll(|| TcpStream::connect(("127.0.0.1", port)).is_ok());
    let log = std::fs::read_to_string(dir.join("verdaccio.log")).unwrap_or_default();
    assert!(up, "verdaccio did not listen on 127.0.0.1:{port}\n{log}");
    (child, format!("http://127.0.0.1:{port}/"))
}

/// The directory holding `storage/` with vx's packages published, and
/// `version`: made once per vx binary, under a lock, by whichever test
/// comes first.
fn published_storage() -> PathBuf {
    let bin = vx_bin();
    let meta = std::fs::metadata(bin).expect("the vx binary");
    let launcher = std::fs::read(repo().join("npm/cli/bin/vx")).expect("the launcher npm/cli/bin/vx");
    let stamp = format!("{:?}{}{}", meta.modified().ok(), meta.len(), launcher.len());
    let key = &blake3::hash([stamp.as_bytes(), &launcher].concat().as_slice()).to_hex()[..16];
    let dir = bin.parent().expect("the binary's directory").join(format!("npm-registry-{key}"));
    std::fs::create_dir_all(&dir).expect("create the registry cache directory");
    let lock = File::create(dir.join(".lock")).expect("create the lock file");
    let _held = Flock::lock(lock, FlockArg::LockExclusive).map_err(|(_, e)| e).expect("lock the registry cache");
    if dir.join("version").is_file() {
        return dir;
    }
    let packages = dir.join("packages");
    let target = if cfg!(target_arch = "aarch64") { "aarch64-unknown-linux-gnu" } else { "x86_64-unknown-linux-gnu" };
    let out = tool(
        repo().join("scripts/package-npm"),
        &["--out".as_ref(), packages.as_os_str(), format!("{target}={}", bin.display()).as_ref()],
        &dir,
    );
    assert!(out.status.success(), "scripts/package-npm failed\n{}", String::from_utf8_lossy(&out.stderr));
    let storage = dir.join("storage");
    let _ = std::fs::remove_dir_all(&storage);
    let (mut child, url) = serve(&dir, &storage);
    let registry_host = url.trim_start_matches("http:");
    std::fs::write(dir.join("npmrc"), format!("{registry_host}:_authToken=vx-tests\n")).expect("write the npmrc");
    let mut names: Vec<PathBuf> =
        std::fs::read_dir(&packages).expect("the packages").flatten().map(|e| e.path()).collect();
    // The platform packages first: the launcher names them.
    names.sort_by_key(|p| p.ends_with("cli"));
    for package in names {
        let out = tool(
            "npm".into(),
            &[
                "publish".as_ref(),
                package.as_os_str(),
                "--registry".as_ref(),
                url.as_ref(),
                "--loglevel=error".as_ref(),
            ],
            &dir,
        );
        assert!(
            out.status.success(),
            "npm publish {} failed\n{}",
            package.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    let manifest = std::fs::read_to_string(packages.join("cli/package.json")).expect("the launcher's package.json");
    let version: serde_json::Value = serde_json::from_str(&manifest).expect("package.json is JSON");
    let version = version["version"].as_str().expect("a version").to_string();
    std::fs::write(dir.join("version"), version).expect("write the version stamp");
    dir
}

fn tool(program: PathBuf, args: &[&std::ffi::OsStr], dir: &Path) -> std::process::Output {
    #[expect(clippy::disallowed_methods, reason = "the tests build and publish the packages directly")]
    let out = Command::new(&program)
        .args(args)
        .env("npm_config_userconfig", dir.join("npmrc"))
        .env("npm_config_cache", dir.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output();
    out.unwrap_or_else(|e| panic!("run {}: {e}", program.display()))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Copies the tree `from` to `to`, files as hard links.
fn copy_linked(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the storage copy");
    for entry in std::fs::read_dir(from).expect("read the published storage").flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            copy_linked(&src, &dst);
        } else {
            std::fs::hard_link(&src, &dst)
                .or_else(|_| std::fs::copy(&src, &dst).map(drop))
                .expect("link a stored file");
        }
    }
}
