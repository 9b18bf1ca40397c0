//! `vx upgrade` against a release feed served by the test itself on
//! 127.0.0.1: a good upgrade replaces the target with the new bytes and
//! keeps it executable; `--check` reports only; an HTML page, a truncated
//! download, a bad checksum or a missing platform asset are refused with
//! the URL named, and the target is left untouched.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};

use sha2::Digest;

use crate::common::{Output, TestEnv};

const OLD: &[u8] = b"#!/bin/sh\necho old vx\n";
const NEW: &[u8] = b"#!/bin/sh\necho new vx 9.9.9\n";

/// One canned response: the body, and how many of its bytes are really
/// sent (fewer than `Content-Length` says, for a truncated download).
#[derive(Clone)]
struct Route {
    body: Vec<u8>,
    send: usize,
}

/// A tiny HTTP/1.1 server on 127.0.0.1: one response per connection.
struct Server {
    base: String,
    routes: Arc<Mutex<HashMap<String, Route>>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
        let base = format!("http://{}", listener.local_addr().expect("a local address"));
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let shared = Arc::clone(&routes);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&request);
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
                let route = shared.lock().expect("routes lock").get(&path).cloned();
                let (status, route) = match route {
                    Some(r) => ("200 OK", r),
                    None => ("404 Not Found", Route { body: b"not found".to_vec(), send: 9 }),
                };
                let head =
                    format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", route.body.len());
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&route.body[..route.send.min(route.body.len())]);
                let _ = stream.flush();
            }
        });
        Server { base, routes }
    }

    fn serve(&self, path: &str, body: &[u8]) {
        self.serve_partly(path, body, body.len());
    }

    fn serve_partly(&self, path: &str, body: &[u8], send: usize) {
        self.routes.lock().expect("routes lock").insert(path.to_string(), Route { body: body.to_vec(), send });
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An environment with an installed "vx" (the upgrade target) and a feed.
struct Setup {
    env: TestEnv,
    server: Server,
}

impl Setup {
    fn new() -> Setup {
        let env = TestEnv::new();
        env.write_executable("install/vx", std::str::from_utf8(OLD).expect("utf-8"));
        Setup { env, server: Server::start() }
    }

    fn upgrade(&self, args: &[&str]) -> Output {
        let target = self.env.path("install/vx");
        let mut all = vec!["upgrade"];
        all.extend_from_slice(args);
        self.env
            .vx_command(&all)
            .env("VX_RELEASE_URL", &self.server.url("/release.json"))
            .env("VX_UPGRADE_TARGET", &target.to_string_lossy())
            .output()
    }

    /// The platform vx reports, from `--check` against a feed without assets.
    fn platform(&self) -> String {
        self.server.serve("/release.json", br#"{ "version": "0.0.1", "assets": [] }"#);
        let out = self.upgrade(&["--check"]);
        out.assert_success();
        let line = out.stdout.lines().find_map(|l| l.strip_prefix("platform: ")).map(str::to_string);
        line.unwrap_or_else(|| panic!("no platform line\n{out}"))
    }

    /// Serves metadata for version 9.9.9 with one asset for `target`.
    fn release(&self, target: &str, sha256: &str, blake3: &str) {
        let meta = format!(
            r#"{{ "version": "9.9.9", "assets": [ {{ "target": "{target}", "url": "vx-bin", "sha256": "{sha256}", "blake3": "{blake3}" }} ] }}"#
        );
        self.server.serve("/release.json", meta.as_bytes());
    }

    fn good_release(&self) {
        let target = self.platform();
        self.release(&target, &hex(&sha2::Sha256::digest(NEW)), blake3::hash(NEW).to_hex().as_str());
    }

    #[track_caller]
    fn assert_untouched(&self, out: &Output) {
        let path = self.env.path("install/vx");
        assert_eq!(std::fs::read(&path).expect("the target is still there"), OLD, "the target changed\n{out}");
        let leftovers: Vec<_> = std::fs::read_dir(self.env.path("install"))
            .expect("read the install dir")
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "vx")
            .collect();
        assert!(leftovers.is_empty(), "temporary files left beside the target: {leftovers:?}\n{out}");
    }
}

#[test]
fn a_good_upgrade_replaces_the_binary_and_keeps_it_executable() {
    let s = Setup::new();
    s.good_release();
    s.server.serve("/vx-bin", NEW);
    let out = s.upgrade(&[]);
    out.assert_success();
    assert!(out.stdout.starts_with("upgraded vx 0.1.0 → 9.9.9 ("), "{out}");
    let path = s.env.path("install/vx");
    assert_eq!(std::fs::read(&path).expect("read the new binary"), NEW);
    let mode = std::fs::metadata(&path).expect("stat the new binary").permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "the new binary must stay executable (mode {mode:o})");
    assert_eq!(
        std::fs::read_dir(s.env.path("install")).expect("read the install dir").count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn check_reports_without_changing_anything() {
    let s = Setup::new();
    s.good_release();
    s.server.serve("/vx-bin", NEW);
    let out = s.upgrade(&["--check"]);
    out.assert_success();
    assert!(out.stdout.starts_with("current: 0.1.0\nlatest: 9.9.9\nplatform: "), "{out}");
    assert!(out.stdout.ends_with("a newer release is available: run `vx upgrade`\n"), "{out}");
    s.assert_untouched(&out);
}

#[test]
fn an_html_page_served_with_200_is_refused() {
    let s = Setup::new();
    s.server.serve("/release.json", b"<!DOCTYPE html><html><body>Please log in to the Wi-Fi</body></html>");
    let out = s.upgrade(&[]);
    out.assert_code(1);
    let url = s.server.url("/release.json");
    assert!(
        out.error_line().starts_with(&format!(
            "vx: error: {url}: the response is not release metadata (it looks like an HTML page)"
        )),
        "{out}"
    );
    s.assert_untouched(&out);
}

#[test]
fn a_truncated_download_is_refused() {
    let s = Setup::new();
    s.good_release();
    s.server.serve_partly("/vx-bin", NEW, NEW.len() / 2);
    let out = s.upgrade(&[]);
    out.assert_code(1);
    let line = out.error_line();
    assert!(line.starts_with(&format!("vx: error: {}: ", s.server.url("/vx-bin"))), "{out}");
    assert!(line.contains("truncated"), "{out}");
    s.assert_untouched(&out);
}

#[test]
fn a_bad_checksum_is_refused() {
    let s = Setup::new();
    let target = s.platform();
    s.release(&target, &hex(&sha2::Sha256::digest(b"something else")), blake3::hash(NEW).to_hex().as_str());
    s.server.serve("/vx-bin", NEW);
    let out = s.upgrade(&[]);
    out.assert_code(1);
    assert!(
        out.error_line()
            .starts_with(&format!("vx: error: {}: sha256 mismatch: the metadata says ", s.server.url("/vx-bin"))),
        "{out}"
    );
    s.assert_untouched(&out);
}

#[test]
fn a_release_without_this_platform_is_refused() {
    let s = Setup::new();
    s.release("sparc-unknown-plan9", &hex(&sha2::Sha256::digest(NEW)), blake3::hash(NEW).to_hex().as_str());
    s.server.serve("/vx-bin", NEW);
    let out = s.upgrade(&[]);
    out.assert_code(1);
    let line = out.error_line();
    assert!(
        line.starts_with(&format!(
            "vx: error: {}: release 9.9.9 has no asset for this platform (",
            s.server.url("/release.json")
        )),
        "{out}"
    );
    assert!(line.contains("it has: sparc-unknown-plan9"), "{out}");
    s.assert_untouched(&out);
}
