//! Dependency-aware keys against lockfiles that the real package managers
//! write here and now: npm, pnpm 9, yarn classic, yarn berry 4 and bun
//! each run `install` on a two-project workspace whose external dependency
//! is a local tarball (made with `npm pack`, so nothing reaches a
//! registry), then again after `web` moves to the dependency's next
//! version. Only `web` runs again, and `vx why` names the move.
//!
//! `scripts/test` installs pnpm, yarn and bun
//! (`scripts/install-package-managers`) and points `VX_TEST_PM_BIN` at
//! their launchers; npm comes with node. A missing manager fails the test.

use std::path::PathBuf;

use crate::common::fixtures::task;
use crate::common::log_cmd as log;
use crate::common::{Output, TestEnv};

pub(super) fn manager_bin(name: &str) -> PathBuf {
    if name == "npm" {
        return PathBuf::from("npm");
    }
    let dir = match std::env::var_os("VX_TEST_PM_BIN").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/vx/package-managers/bin"),
    };
    let bin = dir.join(name);
    assert!(
        bin.is_file(),
        "{name} is not installed (looked for {}); run scripts/test, which installs it with \
         scripts/install-package-managers, or point VX_TEST_PM_BIN at its launchers",
        bin.display()
    );
    bin
}

#[track_caller]
fn succeeded(out: Output, what: &str) {
    assert_eq!(out.code, 0, "{what} failed\n{out}");
}

/// Packs `vxl-dep` 1.0.0 and 1.0.1 into `vendor/`.
fn pack_dependency(env: &TestEnv) {
    for version in ["1.0.0", "1.0.1"] {
        let dir = format!("pack/{version}");
        env.write(
            &format!("{dir}/package.json"),
            &format!("{{\"name\":\"vxl-dep\",\"version\":\"{version}\",\"main\":\"index.js\",\"license\":\"MIT\"}}"),
        );
        env.write(&format!("{dir}/index.js"), &format!("module.exports = '{version}';\n"));
        let args = ["pack", "--pack-destination", "../../vendor", "--loglevel=error"];
        succeeded(env.tool_in(&dir, "npm", &args, &[]), "npm pack");
    }
}

/// `web` depends on `vxl-dep` at `version`; `api` on nothing external.
fn write_web(env: &TestEnv, version: &str) {
    env.write(
        "apps/web/package.json",
        &format!(
            "{{\"name\":\"web\",\"version\":\"1.0.0\",\"dependencies\":{{\"vxl-dep\":\"file:../../vendor/vxl-dep-{version}.tgz\"}}}}"
        ),
    );
}

fn workspace(manager: &str) -> TestEnv {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.root().join("vendor")).expect("vendor dir");
    pack_dependency(&env);
    env.write("vx.toml", "[workspace]\nprojects = [\"apps/*\"]\n");
    env.write("package.json", "{\"name\":\"root\",\"private\":true,\"workspaces\":[\"apps/*\"]}");
    env.write("apps/api/package.json", "{\"name\":\"api\",\"version\":\"1.0.0\"}");
    write_web(&env, "1.0.0");
    for name in ["web", "api"] {
        env.write(&format!("apps/{name}/src/index.js"), name);
        env.write(&format!("apps/{name}/vx.toml"), &task("build", &log(name), "inputs = [\"src/**\"]\n"));
    }
    match manager {
        "pnpm" => env.write("pnpm-workspace.yaml", "packages:\n  - \"apps/*\"\n"),
        "berry" => {
            env.write(".yarnrc.yml", "nodeLinker: node-modules\nenableGlobalCache: false\nenableTelemetry: false\n")
        }
        _ => {}
    }
    env
}

/// The manager's own `install`, writing its lockfile.
fn install(env: &TestEnv, manager: &str) {
    let caches = env.root().join("../pm-caches");
    let cache = |name: &str| caches.join(name).to_string_lossy().into_owned();
    let (args, vars): (Vec<String>, Vec<(&str, String)>) = match manager {
        "npm" => (
            ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--offline", "--loglevel=error"]
                .map(String::from)
                .to_vec(),
            vec![("npm_config_cache", cache("npm"))],
        ),
        // CI=true makes pnpm's, berry's and bun's lockfiles frozen by default.
        "pnpm" => (
            vec![
                "install".into(),
                "--ignore-scripts".into(),
                "--no-frozen-lockfile".into(),
                format!("--store-dir={}", cache("pnpm-store")),
                format!("--cache-dir={}", cache("pnpm-cache")),
                "--config.update-notifier=false".into(),
            ],
            vec![],
        ),
        "yarn1" => (
            ["install", "--ignore-scripts", "--non-interactive", "--no-progress"].map(String::from).to_vec(),
            vec![("YARN_CACHE_FOLDER", cache("yarn1"))],
        ),
        "berry" => (
            ["install", "--mode=skip-build"].map(String::from).to_vec(),
            vec![("YARN_GLOBAL_FOLDER", cache("berry")), ("YARN_ENABLE_IMMUTABLE_INSTALLS", "0".into())],
        ),
        "bun" => (
            ["install", "--ignore-scripts", "--no-progress", "--no-frozen-lockfile"].map(String::from).to_vec(),
            vec![("BUN_INSTALL_CACHE_DIR", cache("bun"))],
        ),
        other => panic!("no manager {other}"),
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    succeeded(env.tool_in(".", manager_bin(manager), &args, &vars), &format!("{manager} install"));
}

#[track_caller]
fn ran(env: &TestEnv, args: &[&str]) -> Vec<String> {
    env.clear_log();
    env.vx(args).assert_success();
    env.log_set()
}

fn an_upgrade_reruns_only_the_upgraded_project(manager: &str) {
    let env = workspace(manager);
    install(&env, manager);
    assert_eq!(ran(&env, &["run", "build"]), ["api", "web"], "{manager}: cold");
    assert!(ran(&env, &["run", "build"]).is_empty(), "{manager}: cached");
    write_web(&env, "1.0.1");
    install(&env, manager);
    let why = env.vx(&["why", "web#build"]);
    why.assert_success();
    // bun locks a tarball by its path, with no version: the move is named by it.
    let moved = if manager == "bun" {
        "vxl-dep ../../vendor/vxl-dep-1.0.0.tgz → ../../vendor/vxl-dep-1.0.1.tgz"
    } else {
        "vxl-dep 1.0.0 → 1.0.1"
    };
    assert!(why.stdout.contains(&format!("lockfile changed: {moved}")), "{manager}: names the move\n{why}");
    assert_eq!(ran(&env, &["run", "build"]), ["web"], "{manager}: api's slice did not move");
    assert!(ran(&env, &["run", "build"]).is_empty(), "{manager}: cached again");
}

#[test]
fn npm_install_upgrade() {
    an_upgrade_reruns_only_the_upgraded_project("npm");
}

#[test]
fn pnpm_install_upgrade() {
    an_upgrade_reruns_only_the_upgraded_project("pnpm");
}

#[test]
fn yarn_classic_install_upgrade() {
    an_upgrade_reruns_only_the_upgraded_project("yarn1");
}

#[test]
fn yarn_berry_install_upgrade() {
    an_upgrade_reruns_only_the_upgraded_project("berry");
}

#[test]
fn bun_install_upgrade() {
    an_upgrade_reruns_only_the_upgraded_project("bun");
}
