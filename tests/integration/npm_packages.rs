//! vx installed the way JavaScript teams install it (docs/install.md): the
//! npm packages `scripts/package-npm` makes of the vx under test, published
//! to a real local registry (verdaccio, `common::registry`) and installed
//! into a fresh copy of `examples/monorepo` by npm, pnpm, yarn berry (with
//! the node-modules linker and with Plug'n'Play) and bun. Then the
//! commands the README gives: `npx vx run build`, `pnpm vx`, `yarn vx`,
//! `bunx vx`. Each test checks the build's outputs, that a second run is
//! all cache hits, and the guard's promise through the launcher and the
//! package manager: after Ctrl-C (SIGINT to the process group) vx
//! stops its tasks gracefully (under pnpm and bun too, which pass on a
//! signal of their own right after it), and after `kill -9` of the package manager
//! (and, under yarn, of the node launcher) no process is left.
//!
//! The package managers come as in `package_managers.rs`
//! (`VX_TEST_PM_BIN`); npm comes with node.

use std::path::Path;

use nix::sys::signal::Signal;

use crate::common::process::{Running, assert_nothing_left, poll};
use crate::common::registry::Registry;
use crate::common::{Output, TestEnv};
use crate::package_managers::manager_bin;

/// How each package manager installs and runs vx.
#[derive(Clone, Copy, Debug)]
enum Manager {
    Npm,
    Pnpm,
    BerryNodeModules,
    BerryPnp,
    Bun,
}

impl Manager {
    /// The launcher of `VX_TEST_PM_BIN` (or `npm`).
    fn bin(self) -> &'static str {
        match self {
            Manager::Npm => "npm",
            Manager::Pnpm => "pnpm",
            Manager::BerryNodeModules | Manager::BerryPnp => "berry",
            Manager::Bun => "bun",
        }
    }

    /// The command a user types in front of `vx ARGS`.
    fn run_prefix(self) -> (String, Vec<&'static str>) {
        match self {
            Manager::Npm => ("npx".into(), vec!["vx"]),
            Manager::Bun => (manager_bin("bun").display().to_string(), vec!["x", "vx"]),
            other => (manager_bin(other.bin()).display().to_string(), vec!["vx"]),
        }
    }
}

/// A copy of examples/monorepo with `@vx-dev/cli` installed by `manager`
/// from `registry`, plus a project whose task runs until it is stopped.
fn installed(manager: Manager, registry: &Registry) -> TestEnv {
    let env = TestEnv::new();
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/monorepo"), env.root());
    // On SIGTERM the task takes a second to end and says so: a vx that got
    // a second signal would have killed it (SIGKILL) before it could.
    env.write(
        "apps/slow/vx.toml",
        "[tasks.serve]\ncommand = '''trap 'sleep 1; echo graceful >> \"$VX_TEST_LOG\"; exit 0' TERM; \
         echo serving >> \"$VX_TEST_LOG\"; sleep 300 & wait'''\n",
    );
    env.write(
        "package.json",
        &format!(
            "{{\"name\":\"example\",\"private\":true,\"devDependencies\":{{\"@vx-dev/cli\":\"{}\"}}}}\n",
            registry.version()
        ),
    );
    let url = registry.url();
    env.write(".npmrc", &format!("registry={url}\n"));
    let linker = match manager {
        Manager::BerryPnp => Some("pnp"),
        Manager::BerryNodeModules => Some("node-modules"),
        _ => None,
    };
    if let Some(linker) = linker {
        // npmMinimalAgeGate: berry holds back versions published in the last
        // day by default, and these were published a moment ago.
        env.write(
            ".yarnrc.yml",
            &format!(
                "nodeLinker: {linker}\nnpmRegistryServer: \"{}\"\nunsafeHttpWhitelist: [\"127.0.0.1\"]\n\
                 npmMinimalAgeGate: 0\nenableGlobalCache: false\nenableTelemetry: false\n",
                url.trim_end_matches('/')
            ),
        );
        env.write("yarn.lock", "");
    }
    if let Manager::Bun = manager {
        env.write("bunfig.toml", &format!("[install]\nregistry = \"{url}\"\n"));
    }
    let caches = env.root().join("../pm-caches");
    let cache = |name: &str| caches.join(name).display().to_string();
    let (args, vars): (Vec<String>, Vec<(&str, String)>) = match manager {
        Manager::Npm => {
            (vec!["install".into(), "--no-audit".into(), "--no-fund".into(), "--loglevel=error".into()], vec![])
        }
        Manager::Pnpm => (
            vec![
                "install".into(),
                format!("--store-dir={}", cache("pnpm-store")),
                format!("--cache-dir={}", cache("pnpm-cache")),
                "--config.update-notifier=false".into(),
            ],
            vec![],
        ),
        Manager::BerryNodeModules | Manager::BerryPnp => (
            vec!["install".into()],
            vec![("YARN_GLOBAL_FOLDER", cache("berry")), ("YARN_ENABLE_IMMUTABLE_INSTALLS", "0".into())],
        ),
        Manager::Bun => (vec!["install".into(), "--no-progress".into()], vec![("BUN_INSTALL_CACHE_DIR", cache("bun"))]),
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let npm_cache = cache("npm");
    vars.push(("npm_config_cache", &npm_cache));
    let out = env.tool_in(".", manager_bin(manager.bin()), &args, &vars);
    assert_eq!(out.code, 0, "{manager:?}: install failed\n{out}");
    env
}

/// `PREFIX vx ARGS` (`npx vx run build`) as the user types it.
fn vx_through(env: &TestEnv, manager: Manager, args: &[&str]) -> Output {
    let (program, mut full) = manager.run_prefix();
    full.extend_from_slice(args);
    let npm_cache = env.root().join("../pm-caches/npm").display().to_string();
    env.tool_in(".", program, &full, &[("npm_config_cache", &npm_cache)])
}

/// The same, started in the background as a process group's leader, the
/// way a shell with job control starts it.
fn start_through(env: &TestEnv, manager: Manager, args: &[&str]) -> Running {
    let (program, mut full) = manager.run_prefix();
    full.extend_from_slice(args);
    let npm_cache = env.root().join("../pm-caches/npm").display().to_string();
    env.tool_command(".", program, &full, &[("npm_config_cache", &npm_cache)]).own_group().spawn()
}

/// `build` on the example through the launcher, then again from the cache.
fn builds_and_hits_the_cache(env: &TestEnv, manager: Manager) {
    let cold = vx_through(env, manager, &["run", "build"]);
    assert_eq!(cold.code, 0, "{manager:?}: the first build failed\n{cold}");
    assert!(cold.stdout.contains("Tasks: 3 run, 3 succeeded"), "{manager:?}: three builds ran\n{cold}");
    let ui = env.read("packages/utils/dist/utils.txt") + &env.read("packages/ui/src/button.txt");
    assert_eq!(env.read("packages/ui/dist/ui.txt"), ui, "{manager:?}: ui's build");
    assert_eq!(
        env.read("apps/web/dist/index.txt"),
        ui + &env.read("apps/web/src/page.txt"),
        "{manager:?}: web's build"
    );
    let warm = vx_through(env, manager, &["run", "build"]);
    assert_eq!(warm.code, 0, "{manager:?}: the second build failed\n{warm}");
    assert!(warm.stdout.contains("3 cached"), "{manager:?}: the second run is all cache hits\n{warm}");
}

/// Starts the endless task through the launcher; waits until it runs.
fn serving(env: &TestEnv, manager: Manager) -> Running {
    env.clear_log();
    let running = start_through(env, manager, &["run", "slow#serve"]);
    let started = poll(|| env.log().iter().any(|l| l == "serving"));
    assert!(started, "{manager:?}: the task never started\n{}", running.output_so_far());
    running
}

/// Ctrl-C reaches vx once, however many processes stand above it: vx stops
/// the task gracefully (a second signal, a second later, would make it kill
/// at once) and
/// nothing is left.
fn ctrl_c_stops_everything(env: &TestEnv, manager: Manager) {
    let running = serving(env, manager);
    running.signal_group(Signal::SIGINT);
    let out = running.finish();
    assert_ne!(out.code, 0, "{manager:?}: an interrupted run is not a success\n{out}");
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("stopping tasks"), "{manager:?}: vx stopped its tasks\n{out}");
    assert_nothing_left(env, &[], &format!("{manager:?}: after Ctrl-C\n{out}"));
    // pnpm runs commands with execa's `cleanup`, so as it dies of the Ctrl-C
    // it sends its child, vx, a SIGTERM too; `bun x` sometimes forwards the
    // SIGINT it got to its child, which has it from the terminal already.
    // vx takes a signal that close to the first as the same stop.
    assert!(
        env.log().iter().any(|l| l == "graceful"),
        "{manager:?}: vx got Ctrl-C once and stopped the task with SIGTERM, not SIGKILL\n{out}"
    );
}

/// `kill -9` of the process the user started (npx, pnpm, yarn, bun)
/// leaves nothing: vx ends with it and stops its task.
fn kill_9_of_the_package_manager_leaves_nothing(env: &TestEnv, manager: Manager) {
    let running = serving(env, manager);
    running.signal(Signal::SIGKILL);
    let out = running.finish();
    assert_nothing_left(env, &[], &format!("{manager:?}: after kill -9 of the package manager\n{out}"));
}

/// Under yarn the node launcher stands between yarn and vx: `kill -9` of
/// it (nothing to forward) leaves nothing either.
fn kill_9_of_the_node_launcher_leaves_nothing(env: &TestEnv, manager: Manager) {
    let running = serving(env, manager);
    let launcher = env
        .live_processes()
        .into_iter()
        .find(|p| p.ppid == running.pid() && p.name == "node")
        .unwrap_or_else(|| panic!("{manager:?}: no node launcher under yarn ({})", running.pid()));
    crate::common::process::send(launcher.pid, Signal::SIGKILL);
    let out = running.finish();
    assert_nothing_left(env, &[], &format!("{manager:?}: after kill -9 of the node launcher\n{out}"));
}

fn through(manager: Manager) {
    let dir = tempfile::tempdir().expect("a directory for the registry");
    let registry = Registry::start(dir.path());
    let env = installed(manager, &registry);
    builds_and_hits_the_cache(&env, manager);
    ctrl_c_stops_everything(&env, manager);
    kill_9_of_the_package_manager_leaves_nothing(&env, manager);
    if let Manager::BerryNodeModules | Manager::BerryPnp = manager {
        kill_9_of_the_node_launcher_leaves_nothing(&env, manager);
    }
}

#[test]
fn npm_packages_through_npx() {
    through(Manager::Npm);
}

#[test]
fn npm_packages_through_pnpm() {
    through(Manager::Pnpm);
}

#[test]
fn npm_packages_through_yarn_node_modules() {
    through(Manager::BerryNodeModules);
}

#[test]
fn npm_packages_through_yarn_pnp() {
    through(Manager::BerryPnp);
}

#[test]
fn npm_packages_through_bunx() {
    through(Manager::Bun);
}

/// Copies the tree `from` into `to` (an example workspace, small).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a directory");
    for entry in std::fs::read_dir(from).expect("read the example").flatten() {
        let name = entry.file_name();
        if name == ".vx" || name == "dist" || name == "node_modules" {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            copy_tree(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).expect("copy a file of the example");
        }
    }
}
