//! `vx prune`: for npm, pnpm 9, yarn berry and bun, a four-project
//! workspace (`app` → `lib` → `util`, and `other`, which nothing kept
//! needs) with real registry dependencies (`is-number` for `lib`, `is-odd`
//! for `other`) is installed by the real package manager, pruned to `app`
//! with `--docker`, and then, as a Dockerfile would: the manager's frozen
//! install runs in `out/json`, `out/full` is copied over it, and `vx run
//! build` there builds exactly `app`, `lib` and `util`.
//!
//! The package managers come as in `package_managers.rs` (`VX_TEST_PM_BIN`,
//! `scripts/install-package-managers`; npm with node), and a missing one
//! fails the test. The install reaches the npm registry.

use std::path::Path;

use crate::common::fixtures::task;
use crate::common::log_cmd as log;
use crate::common::{Output, TestEnv};
use crate::package_managers::manager_bin;

#[track_caller]
fn succeeded(out: Output, what: &str) {
    assert_eq!(out.code, 0, "{what} failed\n{out}");
}

const KEPT: [&str; 3] = ["apps/app", "packages/lib", "packages/util"];

/// The workspace, with `dep` as the way `manager` spells a workspace dependency.
fn workspace(manager: &str) -> TestEnv {
    let env = TestEnv::new();
    let dep = if manager == "npm" { "*" } else { "workspace:*" };
    env.write("vx.toml", "[workspace]\nprojects = [\"apps/*\", \"packages/*\"]\n");
    env.write(".gitignore", "dist/\n");
    env.write(
        "package.json",
        "{\n  \"name\": \"root\",\n  \"private\": true,\n  \"workspaces\": [\"apps/*\", \"packages/*\"]\n}\n",
    );
    let manifest =
        |name: &str, deps: &str| format!("{{\"name\":\"{name}\",\"version\":\"1.0.0\",\"dependencies\":{{{deps}}}}}");
    env.write("apps/app/package.json", &manifest("app", &format!("\"lib\":\"{dep}\"")));
    env.write("packages/lib/package.json", &manifest("lib", &format!("\"util\":\"{dep}\",\"is-number\":\"^7.0.0\"")));
    env.write("packages/util/package.json", &manifest("util", ""));
    env.write("apps/other/package.json", &manifest("other", "\"is-odd\":\"^3.0.1\""));
    for (dir, name) in
        [("apps/app", "app"), ("packages/lib", "lib"), ("packages/util", "util"), ("apps/other", "other")]
    {
        env.write(&format!("{dir}/src/index.js"), &format!("module.exports = '{name}';\n"));
        // lib's build needs its installed registry dependency.
        let check = if name == "lib" { "node -e \"process.exit(require('is-number')(7) ? 0 : 1)\" && " } else { "" };
        let build = format!("{check}mkdir -p dist && cp src/index.js dist/ && {}", log(name));
        env.write(&format!("{dir}/vx.toml"), &task("build", &build, "depends-on = [\"^build\"]\n"));
    }
    match manager {
        "pnpm" => env.write("pnpm-workspace.yaml", "packages:\n  - \"apps/*\"\n  - \"packages/*\"\n"),
        "berry" => {
            env.write(".yarnrc.yml", "nodeLinker: node-modules\nenableGlobalCache: false\nenableTelemetry: false\n")
        }
        _ => {}
    }
    env
}

/// The manager's install in `dir`: writing the lockfile, or (`frozen`)
/// refusing to change it.
fn install(env: &TestEnv, manager: &str, dir: &str, frozen: bool) -> Output {
    let caches = env.root().join("../pm-caches");
    let cache = |name: &str| caches.join(name).to_string_lossy().into_owned();
    let (args, vars): (Vec<String>, Vec<(&str, String)>) = match (manager, frozen) {
        ("npm", _) => (
            [if frozen { "ci" } else { "install" }, "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
                .map(String::from)
                .to_vec(),
            vec![("npm_config_cache", cache("npm"))],
        ),
        ("pnpm", _) => (
            vec![
                "install".into(),
                "--ignore-scripts".into(),
                if frozen { "--frozen-lockfile" } else { "--no-frozen-lockfile" }.into(),
                format!("--store-dir={}", cache("pnpm-store")),
                format!("--cache-dir={}", cache("pnpm-cache")),
                "--config.update-notifier=false".into(),
            ],
            vec![],
        ),
        ("berry", _) => (
            vec!["install".into(), "--mode=skip-build".into()],
            vec![
                ("YARN_GLOBAL_FOLDER", cache("berry")),
                ("YARN_ENABLE_IMMUTABLE_INSTALLS", if frozen { "1" } else { "0" }.into()),
            ],
        ),
        ("bun", _) => (
            [
                "install",
                "--ignore-scripts",
                "--no-progress",
                if frozen { "--frozen-lockfile" } else { "--no-frozen-lockfile" },
            ]
            .map(String::from)
            .to_vec(),
            vec![("BUN_INSTALL_CACHE_DIR", cache("bun"))],
        ),
        (other, _) => panic!("no manager {other}"),
    };
    // A registry reached through a TLS-inspecting proxy needs its CA: the
    // test environment is otherwise cleared.
    let mut vars = vars;
    for name in ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"] {
        if let Some(value) = std::env::var_os(name) {
            vars.push((name, value.to_string_lossy().into_owned()));
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.tool_in(dir, manager_bin(manager), &args, &vars)
}

/// Copies the tree at `from` over `to`, as `COPY out/full/ .` does.
fn copy_over(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read the directory") {
        let entry = entry.expect("read an entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&dest).expect("create a directory");
            copy_over(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy a file");
        }
    }
}

/// The names of every entry under any `node_modules` below `dir` (links
/// not followed).
fn installed_names(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), false)];
    while let Some((d, inside)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if inside {
                names.push(name.clone());
            }
            if is_dir {
                stack.push((entry.path(), inside || name == "node_modules"));
            }
        }
    }
    names
}

fn a_pruned_subset_installs_frozen_and_builds_only_itself(manager: &str, lockfile: &str) {
    let env = workspace(manager);
    succeeded(install(&env, manager, ".", false), &format!("{manager} install"));
    let out = env.vx(&["prune", "app", "--out", "out", "--docker"]);
    out.assert_success();
    assert!(out.stdout.contains("pruned to 3 of 4 projects (app, lib, util)"), "{out}");

    let root = env.root().join("out");
    for dir in KEPT {
        assert!(root.join("json").join(dir).join("package.json").is_file(), "{manager}: json/{dir}/package.json");
        assert!(root.join("full").join(dir).join("src/index.js").is_file(), "{manager}: full/{dir} has its sources");
        assert!(!root.join("json").join(dir).join("src").exists(), "{manager}: json/{dir} holds only the manifest");
    }
    for layout in ["json", "full"] {
        assert!(!root.join(layout).join("apps/other").exists(), "{manager}: other is pruned from {layout}/");
        assert!(!root.join(layout).join("node_modules").exists(), "{manager}: no installed packages in {layout}/");
    }
    assert!(root.join("full/vx.toml").is_file() && root.join("full/apps/app/vx.toml").is_file());
    let pruned = std::fs::read_to_string(root.join("json").join(lockfile)).expect("json/ has the lockfile");
    assert_eq!(std::fs::read_to_string(root.join(lockfile)).expect("out/ has the lockfile"), pruned);
    assert!(pruned.contains("is-number") && !pruned.contains("is-odd"), "{manager}: only what app needs\n{pruned}");

    // The Dockerfile's steps: install from json/, then the sources over it.
    succeeded(install(&env, manager, "out/json", true), &format!("{manager}'s frozen install of the pruned lockfile"));
    // Hoisted or not (pnpm and bun keep a store under node_modules/.pnpm, .bun).
    let installed = installed_names(&root.join("json"));
    assert!(
        installed.iter().any(|n| n.starts_with("is-number")),
        "{manager} installed lib's dependency: {installed:?}"
    );
    assert!(!installed.iter().any(|n| n.starts_with("is-odd")), "{manager} installed nothing for other: {installed:?}");
    copy_over(&root.join("full"), &root.join("json"));
    env.clear_log();
    env.vx_in("out/json", &["run", "build"]).assert_success();
    assert_eq!(env.log_set(), ["app", "lib", "util"], "{manager}: exactly the pruned projects build");
    for dir in KEPT {
        assert!(root.join("json").join(dir).join("dist/index.js").is_file(), "{manager}: {dir} built");
    }
    assert!(!root.join("json/apps/other").exists());
}

#[test]
fn prune_npm_ci() {
    a_pruned_subset_installs_frozen_and_builds_only_itself("npm", "package-lock.json");
}

#[test]
fn prune_pnpm_frozen_lockfile() {
    a_pruned_subset_installs_frozen_and_builds_only_itself("pnpm", "pnpm-lock.yaml");
}

#[test]
fn prune_yarn_berry_immutable() {
    a_pruned_subset_installs_frozen_and_builds_only_itself("berry", "yarn.lock");
}

#[test]
fn prune_bun_frozen_lockfile() {
    a_pruned_subset_installs_frozen_and_builds_only_itself("bun", "bun.lock");
}

#[test]
fn prune_without_docker_writes_one_tree() {
    let env = workspace("npm");
    env.vx(&["prune", "lib", "--out", "sub"]).assert_success();
    let root = env.root().join("sub");
    assert!(root.join("packages/lib/src/index.js").is_file() && root.join("packages/util/package.json").is_file());
    assert!(!root.join("apps").exists(), "neither app nor other is kept");
    assert!(!root.join("json").exists() && !root.join("full").exists());
    assert!(root.join("vx.toml").is_file() && root.join("package.json").is_file());
}

#[test]
fn prune_gitignored_files_stay_behind() {
    let env = workspace("npm");
    env.write("packages/util/dist/stale.js", "old");
    env.write("packages/util/.env.example", "A=1");
    env.vx(&["prune", "util", "--out", "out"]).assert_success();
    assert!(!env.root().join("out/packages/util/dist").exists(), ".gitignore's dist/ is not copied");
    assert!(env.root().join("out/packages/util/.env.example").is_file(), "hidden files are");
}

#[test]
fn prune_refuses_unknown_projects_and_a_non_empty_out() {
    let env = workspace("npm");
    let out = env.vx(&["prune", "ap", "--out", "out"]);
    out.assert_code(2);
    assert!(out.error_line().contains("unknown project `ap`") && out.stderr.contains("`app`"), "{out}");
    assert!(!env.root().join("out").exists(), "nothing written");
    env.write("out/keep.txt", "mine");
    let out = env.vx(&["prune", "app", "--out", "out"]);
    out.assert_code(2);
    assert!(out.error_line().contains("/out is not empty"), "{out}");
    assert_eq!(env.read("out/keep.txt"), "mine");
}

#[test]
fn prune_refuses_a_yarn_classic_lockfile_in_one_line() {
    let env = workspace("npm");
    env.write(
        "yarn.lock",
        "# THIS IS AN AUTOGENERATED FILE.\n# yarn lockfile v1\n\n\nis-number@^7.0.0:\n  version \"7.0.0\"\n",
    );
    let out = env.vx(&["prune", "app", "--out", "out"]);
    out.assert_code(2);
    assert!(out.error_line().contains("prune yarn.lock: a yarn classic (v1) lockfile is not pruned"), "{out}");
}
