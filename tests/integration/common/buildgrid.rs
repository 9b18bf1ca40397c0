//! Real BuildGrid 0.4.4 servers for the REAPI tests, started through
//! `scripts/buildgrid-server` (tests/fixtures/buildgrid/README.md): one
//! server per test, on free ports of 127.0.0.1, with its scratch dir (the
//! disk CAS, and PostgreSQL in exec mode) in a temporary directory of its
//! own, and in a process group of its own, so that dropping the fixture
//! stops the server and everything it started.
//!
//! `scripts/install-buildgrid` installs the server (`scripts/test` runs
//! it). A missing install fails the test with that hint; it is never
//! skipped.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::process::PATIENCE;

/// Starts that lose a race for a free port are retried this many times.
const START_ATTEMPTS: usize = 3;
/// How long an exec-mode server (and its PostgreSQL) may take to stop on
/// SIGTERM before the group is killed.
const STOP_PATIENCE: Duration = Duration::from_secs(15);

/// Which configuration of `tests/fixtures/buildgrid/` the server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `cache.yml`: CAS, ActionCache, ByteStream, Capabilities.
    Cache,
    /// `cache-readonly.yml`: the same, refusing action cache updates.
    CacheReadonly,
    /// `cache-tls.yml`: `cache.yml` over TLS, with a throwaway CA.
    CacheTls,
    /// `exec.yml`: the cache plus Execution, Operations and Bots, on PostgreSQL.
    Exec,
}

impl Mode {
    fn arg(self) -> &'static str {
        match self {
            Mode::Cache => "cache",
            Mode::CacheReadonly => "cache-readonly",
            Mode::CacheTls => "cache-tls",
            Mode::Exec => "exec",
        }
    }
}

/// A running BuildGrid server; dropping it stops the server's whole
/// process group and removes its scratch dir.
#[derive(Debug)]
pub(crate) struct BuildGrid {
    child: Option<Child>,
    mode: Mode,
    port: u16,
    pg_port: Option<u16>,
    /// The scratch dir given to the script (`DIR`): `bgd.pid`, `cas/`, `pg/`.
    dir: PathBuf,
    /// The server's own stdout and stderr.
    log: PathBuf,
    /// Removed once `drop` has stopped the server.
    _temp: tempfile::TempDir,
}

impl BuildGrid {
    /// A cache server (`cache.yml`).
    pub(crate) fn start() -> BuildGrid {
        BuildGrid::launch(Mode::Cache)
    }

    /// A cache server whose action cache refuses updates (`cache-readonly.yml`).
    pub(crate) fn start_readonly() -> BuildGrid {
        BuildGrid::launch(Mode::CacheReadonly)
    }

    /// A cache server over TLS (`cache-tls.yml`); its CA is [`Self::tls_ca`].
    pub(crate) fn start_tls() -> BuildGrid {
        BuildGrid::launch(Mode::CacheTls)
    }

    /// The CA certificate (PEM) a TLS server's certificate is signed by.
    pub(crate) fn tls_ca(&self) -> PathBuf {
        self.dir.join("tls/ca.pem")
    }

    /// A server with remote execution (`exec.yml`), its scheduler on a
    /// private PostgreSQL listening on a second free port.
    pub(crate) fn start_exec() -> BuildGrid {
        BuildGrid::launch(Mode::Exec)
    }

    fn launch(mode: Mode) -> BuildGrid {
        check_installed(mode);
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            match BuildGrid::try_launch(mode) {
                Ok(server) => return server,
                // Another process took the free port between the probe and the bind.
                Err(log) if log.contains("Failed to bind") || log.contains("Address already in use") => {
                    last_log = log;
                }
                Err(log) => panic!("the BuildGrid {} server exited during startup:\n{log}", mode.arg()),
            }
        }
        panic!("the BuildGrid {} server found no free port in {START_ATTEMPTS} attempts:\n{last_log}", mode.arg());
    }

    /// Starts the script and waits for `DIR/bgd.pid`; `Err` with the
    /// server's output when it exits first.
    fn try_launch(mode: Mode) -> Result<BuildGrid, String> {
        let temp = tempfile::Builder::new().prefix("vx-buildgrid-").tempdir().expect("create a temporary directory");
        let dir = temp.path().join("server");
        let log = temp.path().join("server.log");
        let (port, pg_port) = if mode == Mode::Exec {
            let [a, b] = free_ports::<2>();
            (a, Some(b))
        } else {
            (free_ports::<1>()[0], None)
        };
        let out = std::fs::File::create(&log).expect("create the server log");
        #[expect(clippy::disallowed_methods, reason = "the tests start the REAPI server themselves, outside any task")]
        let mut cmd = Command::new(script());
        cmd.arg(mode.arg()).arg(port.to_string()).arg(&dir);
        if let Some(pg) = pg_port {
            cmd.arg(pg.to_string());
        }
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("share the server log"))
            .stderr(out)
            .process_group(0);
        if let Some(venv) = std::env::var_os("VX_BUILDGRID_VENV") {
            cmd.env("VX_BUILDGRID_VENV", venv);
        }
        let child = cmd.spawn().unwrap_or_else(|e| panic!("start {}: {e}", script().display()));
        let mut server = BuildGrid { child: Some(child), mode, port, pg_port, dir, log, _temp: temp };
        let deadline = Instant::now() + PATIENCE;
        while !server.dir.join("bgd.pid").exists() {
            let exited = server.child.as_mut().and_then(|c| c.try_wait().expect("poll the server"));
            if exited.is_some() {
                server.child = None;
                return Err(server.output());
            }
            if Instant::now() > deadline {
                let output = server.output();
                drop(server);
                panic!("the BuildGrid {} server was not ready within {PATIENCE:?}:\n{output}", mode.arg());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    /// The endpoint for `[remote]`: `grpc://127.0.0.1:PORT`.
    pub(crate) fn endpoint(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
    }

    /// The `[remote]` table that points vx at this server.
    pub(crate) fn remote_toml(&self) -> String {
        format!("\n[remote]\nendpoint = \"{}\"\n", self.endpoint())
    }

    /// The PostgreSQL port of an exec-mode server.
    pub(crate) fn pg_port(&self) -> Option<u16> {
        self.pg_port
    }

    /// The PID of the server, which leads its process group.
    #[track_caller]
    pub(crate) fn pid(&self) -> i32 {
        self.child.as_ref().expect("the server was killed").id() as i32
    }

    /// Where the disk CAS keeps its blobs: `DIR/cas/cas/objects/HH/REST`
    /// for a hash `HHREST` (`cas/storage/disk.py` `_get_object_path`).
    fn objects_dir(&self) -> PathBuf {
        self.dir.join("cas/cas/objects")
    }

    /// The file holding the blob whose SHA-256 is `sha256` (hex); panics
    /// when the server does not hold it.
    #[track_caller]
    pub(crate) fn cas_file(&self, sha256: &str) -> PathBuf {
        let path = self.objects_dir().join(&sha256[..2]).join(&sha256[2..]);
        assert!(path.is_file(), "the BuildGrid CAS holds no blob {sha256} (no {})", path.display());
        path
    }

    /// How many blobs the disk CAS holds.
    pub(crate) fn cas_blob_count(&self) -> usize {
        let shards = std::fs::read_dir(self.objects_dir()).into_iter().flatten().flatten();
        shards.map(|d| std::fs::read_dir(d.path()).into_iter().flatten().count()).sum()
    }

    /// What the server printed so far.
    pub(crate) fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills the server and everything it started (SIGKILL to the group)
    /// and waits for it: its port is closed when this returns.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal_group(child.id() as i32, Signal::SIGKILL);
            let _ = child.wait();
        }
    }
}

impl Drop for BuildGrid {
    /// A cache server is killed outright. An exec server gets SIGTERM first
    /// so that PostgreSQL shuts down cleanly (a killed postmaster leaves
    /// its shared memory behind), then the group is killed whatever is left.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let pgid = child.id() as i32;
        if self.mode == Mode::Exec {
            signal_group(pgid, Signal::SIGTERM);
            let deadline = Instant::now() + STOP_PATIENCE;
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            while group_alive(pgid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        signal_group(pgid, Signal::SIGKILL);
        let _ = child.wait();
    }
}

/// `scripts/buildgrid-server` in this repository.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/buildgrid-server")
}

/// Fails the test, saying how to install them, unless the server (and
/// PostgreSQL for exec mode) are installed.
#[track_caller]
fn check_installed(mode: Mode) {
    let venv = match std::env::var_os("VX_BUILDGRID_VENV").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/vx/buildgrid-venv"),
    };
    let bgd = venv.join("bin/bgd");
    assert!(
        bgd.is_file(),
        "BuildGrid is not installed (looked for {}): run scripts/install-buildgrid (scripts/test runs it), \
         or point VX_BUILDGRID_VENV at its virtualenv",
        bgd.display()
    );
    if mode == Mode::Exec {
        let initdb = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .any(|v| v.path().join("bin/initdb").is_file());
        assert!(
            initdb,
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run scripts/install-buildgrid"
        );
    }
}

/// `N` distinct ports that were free a moment ago (all held at once while
/// probing, so they differ).
fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<std::net::TcpListener> =
        (0..N).map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port")).collect();
    std::array::from_fn(|i| listeners[i].local_addr().expect("a bound address").port())
}

/// Sends `signal` to the process group `pgid`; a group already gone is fine.
fn signal_group(pgid: i32, signal: Signal) {
    #[expect(clippy::disallowed_methods, reason = "the tests stop the REAPI server they started")]
    let _ = nix::sys::signal::kill(Pid::from_raw(-pgid), signal);
}

/// Whether any process of the group `pgid` is left.
fn group_alive(pgid: i32) -> bool {
    #[expect(clippy::disallowed_methods, reason = "signal 0 only probes the group")]
    let alive = nix::sys::signal::kill(Pid::from_raw(-pgid), None).is_ok();
    alive
}
