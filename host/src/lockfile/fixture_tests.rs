//! The lockfiles real package managers wrote (scripts/make-lockfile-fixtures)
//! read back: every format's slices, the upgrade of one dependency of
//! `web`, and bad input.
//!
//! The fixture workspace: the root has devDependency vxf-test; `apps/web`
//! depends on the workspace package `@fx/ui` and on vxf-pad 1.0.0 (1.0.1
//! after the upgrade, which also brings vxf-extra), which needs
//! @vxf/core ^1; `apps/api` depends on vxf-pad 1.0.0, on vxf-log (which
//! needs @vxf/core ^2) and optionally on vxf-opt; `packages/ui` depends on
//! vxf-widget (peer: vxf-peer) and has devDependency vxf-test.

use std::collections::HashMap;
use std::path::Path;

use super::testutil::{ScratchDir, fixture};
use super::{DepChange, Integrity, Lockfile, LockfileError, LockfileFormat, LockfileKind, diff_slices};

const FORMATS: [(&str, LockfileFormat); 7] = [
    ("npm", LockfileFormat::Npm(3)),
    ("pnpm6", LockfileFormat::Pnpm(6)),
    ("pnpm9", LockfileFormat::Pnpm(9)),
    ("yarn1", LockfileFormat::YarnClassic),
    ("berry", LockfileFormat::YarnBerry(10)),
    ("bun12", LockfileFormat::Bun(1)),
    ("bun", LockfileFormat::Bun(2)),
];

const ROOT: &[&str] = &["vxf-test 1.0.0"];
const WEB: &[&str] = &["@vxf/core 1.0.0", "vxf-pad 1.0.0"];
const WEB_UPGRADED: &[&str] = &["@vxf/core 1.0.0", "vxf-extra 1.0.0", "vxf-pad 1.0.1"];
const API: &[&str] = &["@vxf/core 1.0.0", "@vxf/core 2.0.0", "vxf-log 1.0.0", "vxf-opt 1.0.0", "vxf-pad 1.0.0"];
const UI: &[&str] = &["vxf-peer 1.0.0", "vxf-test 1.0.0", "vxf-widget 1.0.0"];
/// Yarn (classic and berry) does not install peer dependencies.
const UI_NO_PEERS: &[&str] = &["vxf-test 1.0.0", "vxf-widget 1.0.0"];

fn open(format: &str, stage: &str) -> Lockfile {
    Lockfile::find_and_parse(&fixture(format, stage))
        .unwrap_or_else(|e| panic!("{format}/{stage}: {e}"))
        .unwrap_or_else(|| panic!("{format}/{stage}: no lockfile found"))
}

fn names(lock: &Lockfile, dir: &str) -> Vec<String> {
    lock.slice(dir).iter().map(ToString::to_string).collect()
}

/// `name@version` → integrity, as `npm pack` reported each tarball.
fn tarball_integrity() -> HashMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lockfile/fixtures/tarballs.json");
    let text = std::fs::read_to_string(path).expect("tarballs.json");
    let all: Vec<serde_json::Value> = serde_json::from_str(&text).expect("tarballs.json parses");
    all.iter()
        .map(|t| {
            (
                format!("{}@{}", t["name"].as_str().unwrap_or(""), t["version"].as_str().unwrap_or("")),
                t["integrity"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn every_format_is_found_and_read_as_what_it_is() {
    for (format, expected) in FORMATS {
        for stage in ["before", "after"] {
            assert_eq!(open(format, stage).format(), expected, "{format}/{stage}");
        }
    }
}

#[test]
fn every_projects_slice_is_its_own_external_dependencies_transitively() {
    for (format, _) in FORMATS {
        let lock = open(format, "before");
        let ui = if format == "yarn1" || format == "berry" { UI_NO_PEERS } else { UI };
        assert_eq!(names(&lock, ""), ROOT, "{format}: root");
        assert_eq!(names(&lock, "apps/web"), WEB, "{format}: web");
        assert_eq!(names(&lock, "apps/api"), API, "{format}: api");
        assert_eq!(names(&lock, "packages/ui"), ui, "{format}: ui");
        for dir in ["", "apps/web", "apps/api", "packages/ui"] {
            assert!(lock.has_project(dir), "{format}: {dir:?}");
        }
        assert!(lock.slice("apps/missing").is_empty(), "{format}");
    }
}

#[test]
fn integrity_is_the_tarballs_hash_or_berrys_checksum() {
    let packed = tarball_integrity();
    for (format, _) in FORMATS {
        let lock = open(format, "after");
        for dir in ["", "apps/web", "apps/api", "packages/ui"] {
            for dep in lock.slice(dir) {
                let Integrity::Hash(hash) = &dep.integrity else {
                    panic!("{format}: {dep} has no hash: {:?}", dep.integrity);
                };
                if format == "berry" {
                    assert!(hash.starts_with("10c0/") && hash.len() == 5 + 128, "{format}: {dep} {hash}");
                } else {
                    assert_eq!(Some(hash), packed.get(&format!("{}@{}", dep.name, dep.version)), "{format}: {dep}");
                }
            }
        }
    }
}

#[test]
fn upgrading_a_dependency_of_web_moves_webs_slice_and_no_other() {
    for (format, _) in FORMATS {
        let (before, after) = (open(format, "before"), open(format, "after"));
        assert_eq!(names(&after, "apps/web"), WEB_UPGRADED, "{format}");
        assert_ne!(before.slice_digest("apps/web"), after.slice_digest("apps/web"), "{format}");
        for dir in ["", "apps/web", "apps/api", "packages/ui"] {
            assert!(before.is_complete(dir) && after.is_complete(dir), "{format}: {dir:?} resolves every dependency");
        }
        for dir in ["", "apps/api", "packages/ui"] {
            assert_eq!(before.slice_digest(dir), after.slice_digest(dir), "{format}: {dir:?}");
            assert_eq!(before.slice(dir), after.slice(dir), "{format}: {dir:?}");
        }
        let changes = diff_slices(&before.slice("apps/web"), &after.slice("apps/web"));
        let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
        assert_eq!(lines, ["vxf-extra 1.0.0 added", "vxf-pad 1.0.0 → 1.0.1"], "{format}");
        assert!(changes.contains(&DepChange::Moved {
            name: "vxf-pad".into(),
            from: "1.0.0".into(),
            to: "1.0.1".into(),
        }));
    }
}

#[test]
fn slices_and_digests_agree_and_the_root_is_spelled_either_way() {
    let lock = open("pnpm9", "before");
    assert_eq!(lock.slice_digest("apps/web"), super::digest::slice_digest(&lock.slice("apps/web")));
    assert_eq!(lock.slice("."), lock.slice(""));
    assert_eq!(lock.slice("./apps/web/"), lock.slice("apps/web"));
}

#[test]
fn a_lockfile_is_shareable_across_threads() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<Lockfile>();
    let lock = std::sync::Arc::new(open("npm", "before"));
    let other = std::sync::Arc::clone(&lock);
    let web = std::thread::spawn(move || other.slice_digest("apps/web")).join().expect("joins");
    assert_eq!(web, lock.slice_digest("apps/web"));
}

/// A scratch workspace with one fixture's manifests (yarn classic reads
/// them), in which lockfile text is parsed.
struct Scratch {
    ws: ScratchDir,
    name: &'static str,
    original: String,
}

impl Scratch {
    fn new(format: &str, name: &'static str) -> Self {
        let src = fixture(format, "before");
        let ws = ScratchDir::new(&format!("reparse-{format}"));
        for rel in ["package.json", "apps/web/package.json", "apps/api/package.json", "packages/ui/package.json"] {
            ws.write(rel, std::fs::read(src.join(rel)).expect("fixture manifest"));
        }
        let original = std::fs::read_to_string(src.join(name)).expect("fixture lockfile");
        Self { ws, name, original }
    }

    fn parse(&self, text: &str) -> Result<Lockfile, LockfileError> {
        let path = self.ws.write(self.name, text);
        Lockfile::parse_file(self.ws.path(), kind(self.name), &path)
    }
}

fn reparse(format: &str, name: &'static str, edit: impl FnOnce(&str) -> String) -> Result<Lockfile, LockfileError> {
    let scratch = Scratch::new(format, name);
    scratch.parse(&edit(&scratch.original))
}

fn kind(name: &str) -> LockfileKind {
    super::LOCKFILE_NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k).expect("a lockfile name")
}

const LOCKFILES: [(&str, &str); 7] = [
    ("npm", "package-lock.json"),
    ("pnpm6", "pnpm-lock.yaml"),
    ("pnpm9", "pnpm-lock.yaml"),
    ("yarn1", "yarn.lock"),
    ("berry", "yarn.lock"),
    ("bun12", "bun.lock"),
    ("bun", "bun.lock"),
];

#[test]
fn garbage_is_an_error_that_names_the_file_in_one_line() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let garbage: String = (0..4096)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            char::from(b' ' + (seed % 95) as u8)
        })
        .collect();
    for (format, name) in LOCKFILES {
        let err = reparse(format, name, |_| garbage.clone()).expect_err(format);
        let message = err.to_string();
        assert!(message.contains(name) && !message.contains('\n'), "{format}: {message}");
        assert_eq!(err.files().len(), 1, "{format}");
    }
}

#[test]
fn a_truncated_lockfile_never_panics_and_a_cut_mid_value_is_an_error() {
    for (format, name) in LOCKFILES {
        let scratch = Scratch::new(format, name);
        let text = scratch.original.clone();
        // Every cut must come back (an error or, for a cut between YAML or
        // yarn entries, a smaller valid file); none may panic.
        for cut in (0..text.len()).step_by(37) {
            let cut = (0..=cut).rev().find(|&c| text.is_char_boundary(c)).unwrap_or(0);
            let _ = scratch.parse(&text[..cut]);
        }
        // Cutting inside an integrity hash leaves an unterminated string or
        // flow mapping. Not in berry's YAML, where the hash is a plain
        // scalar and a cut there is just a shorter, valid file.
        if format == "berry" {
            continue;
        }
        let hash_at = text.find("sha512-").expect("a hash") + 9;
        let cut = scratch.parse(&format!("{}\"\n", &text[..hash_at]));
        assert!(cut.is_err(), "{format}: a cut inside a hash parsed");
    }
}

#[test]
fn a_lockfile_over_the_size_limit_is_refused_before_it_is_read() {
    let ws = ScratchDir::new("huge");
    let path = ws.path().join("package-lock.json");
    let file = std::fs::File::create(&path).expect("create");
    // A sparse file: the size is real, the disk is not used.
    file.set_len(super::MAX_LOCKFILE_BYTES + 1).expect("set_len");
    let err = Lockfile::find_and_parse(ws.path()).unwrap_err();
    assert!(matches!(err, LockfileError::TooLarge { .. }), "{err}");
}

#[test]
fn hostile_nesting_and_aliases_are_errors_not_stack_or_memory_exhaustion() {
    let deep_json = format!("{{\"lockfileVersion\": 3, \"packages\": {}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(reparse("npm", "package-lock.json", |_| deep_json.clone()).is_err());
    assert!(reparse("bun", "bun.lock", |_| deep_json.replace("packages", "workspaces")).is_err());
    let deep_yaml = format!("lockfileVersion: '9.0'\nimporters: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    assert!(reparse("pnpm9", "pnpm-lock.yaml", |_| deep_yaml.clone()).is_err());
    // A billion laughs: each alias level multiplies the expansion by ten.
    let mut laughs =
        String::from("lockfileVersion: '9.0'\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..12 {
        let p = i - 1;
        laughs
            .push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
    }
    laughs.push_str("importers: *a11\n");
    assert!(reparse("pnpm9", "pnpm-lock.yaml", |_| laughs.clone()).is_err());
    let berry_laughs = laughs.replace("lockfileVersion: '9.0'", "__metadata:\n  version: 8");
    assert!(reparse("berry", "yarn.lock", |_| berry_laughs).is_err());
}
