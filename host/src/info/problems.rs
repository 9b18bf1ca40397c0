//! The doctor's findings: each problem is what is wrong, in one line, and
//! the one line that mends it. Only what stops something from working (or
//! makes it slower than it need be) is a problem; what this machine simply
//! lacks and nothing asks for (Landlock with no `sandbox` task) is shown
//! in the report and not counted.

use serde::Serialize;

use super::Info;
use crate::config::ConfigError;
use crate::error::Error;

/// One thing wrong, and how to mend it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Problem {
    /// The report's section: `workspace`, `cache`, `remote`, `plugins`,
    /// `guard`, `sandbox`, `watcher`.
    pub area: &'static str,
    pub problem: String,
    pub fix: String,
}

fn problem(area: &'static str, problem: impl Into<String>, fix: impl Into<String>) -> Problem {
    Problem { area, problem: problem.into(), fix: fix.into() }
}

/// Every problem `info` shows; `load` is why the workspace did not load,
/// `unlisted` why its plugins could not be listed.
pub(crate) fn find(info: &Info, load: Option<&ConfigError>, unlisted: Option<&Error>) -> Vec<Problem> {
    let mut found = Vec::new();
    if let Some(e) = load {
        let fix = if matches!(e, ConfigError::NoWorkspace { .. }) {
            "run `vx init` at the repository's root, or run vx inside a workspace (or with -C DIR)"
        } else {
            "mend the file at the place the message names; `vx show` reads it again"
        };
        found.push(problem("workspace", e.to_string(), fix));
    }
    cache(info, &mut found);
    remote(info, &mut found);
    if let Some(e) = unlisted {
        found.push(problem("plugins", e.to_string(), "mend vx.lock, or pin the plugins again with `vx plugin add`"));
    }
    plugins(info, &mut found);
    system(info, &mut found);
    found
}

fn cache(info: &Info, found: &mut Vec<Problem>) {
    let Some(cache) = &info.cache else { return };
    if !cache.writable {
        found.push(problem(
            "cache",
            format!("the cache directory {} is not writable, so nothing is cached", cache.dir.display()),
            "make it writable, or point `[cache] dir` (or VX_CACHE_DIR) at a directory vx can write",
        ));
    }
    if cache.max_size > 0 && cache.bytes > cache.max_size {
        found.push(problem(
            "cache",
            format!(
                "the cache holds {}, over its max-size of {}",
                crate::units::format_bytes(cache.bytes),
                crate::units::format_bytes(cache.max_size)
            ),
            "run `vx cache gc` (a run does it too when it ends)",
        ));
    }
}

fn remote(info: &Info, found: &mut Vec<Problem>) {
    let Some(remote) = &info.remote else { return };
    let Some(error) = &remote.error else { return };
    let fix = match &remote.endpoint {
        Some(endpoint) => format!(
            "start the server at {endpoint} or mend `[remote]` in vx.toml; until then runs warn once and use the local cache"
        ),
        None => format!(
            "mend `[plugins.{}]` in vx.toml (its path, grants and config); until then runs warn once and use the local cache",
            remote.backend
        ),
    };
    found.push(problem("remote", format!("the remote cache `{}` cannot be used: {error}", remote.backend), fix));
}

fn plugins(info: &Info, found: &mut Vec<Problem>) {
    for p in &info.plugins {
        let file = p.file.display();
        let name = &p.name;
        if p.state.starts_with("unreadable") {
            found.push(problem(
                "plugins",
                format!("plugin `{name}`: {}", p.state),
                format!("mend `path` in [plugins.{name}], or build the component it names"),
            ));
        } else if p.state == "not pinned" {
            found.push(problem(
                "plugins",
                format!("plugin `{name}` is not pinned in vx.lock, so it does not load"),
                format!("pin it with `vx plugin add {file} --name {name}`"),
            ));
        } else if p.state.starts_with("DOES NOT MATCH") {
            found.push(problem(
                "plugins",
                format!("plugin `{name}`: {file} is not the file pinned in vx.lock, so it does not load"),
                format!("if the new file is intended, re-pin it with `vx plugin add {file} --name {name} --force`"),
            ));
        }
        if !p.ungranted.is_empty() {
            found.push(problem(
                "plugins",
                format!("plugin `{name}` requests grants it does not have: {}", p.ungranted.join(", ")),
                format!("add them to [plugins.{name}] in vx.toml if you trust it (`vx plugin list` shows each)"),
            ));
        }
    }
}

fn system(info: &Info, found: &mut Vec<Problem>) {
    if !info.guard.procfs {
        found.push(problem(
            "guard",
            "/proc is not readable, so processes that leave their task's group cannot be found and stopped",
            "mount procfs at /proc (in a container: do not mask it)",
        ));
    }
    if !info.guard.pidfd {
        found.push(problem(
            "guard",
            "pidfd_open is not available (Linux before 5.3), so tasks have no CPU and memory figures",
            "run vx on Linux 5.3 or later",
        ));
    }
    if let Some(ws) = &info.workspace {
        let tasks = |n: usize| if n == 1 { "1 task sets".to_string() } else { format!("{n} tasks set") };
        if ws.sandboxed_tasks > 0 && info.sandbox.landlock_abi < 1 {
            found.push(problem(
                "sandbox",
                format!("{} `sandbox`, but this kernel has no Landlock, so they fail", tasks(ws.sandboxed_tasks)),
                "run them on Linux 5.13 or later with `landlock` in the kernel's LSM list (`lsm=` boot option)",
            ));
        }
        if ws.sandboxed_without_network > 0 && !info.sandbox.user_namespaces {
            found.push(problem(
                "sandbox",
                format!(
                    "{} `sandbox` without the host's network, which needs an unprivileged user namespace, and this machine refuses them",
                    tasks(ws.sandboxed_without_network)
                ),
                "allow them (`sysctl kernel.apparmor_restrict_unprivileged_userns=0` or `user.max_user_namespaces=15000`), or set `sandbox.network = true`",
            ));
        }
        if ws.sandboxed_tasks > 0 && !info.sandbox.seccomp_user_notif {
            found.push(problem(
                "sandbox",
                "seccomp user notification is missing, so a sandboxed task's refusal cannot name the path",
                "run vx on Linux 5.5 or later",
            ));
        }
    }
    let w = &info.watcher;
    let raise = |dirs: u64| {
        format!(
            "raise the limit: `sysctl fs.inotify.max_user_watches={}` (and in /etc/sysctl.d to keep it)",
            (dirs * 2).max(524_288)
        )
    };
    if let (Some(dirs), Some(max)) = (w.directories, w.max_user_watches) {
        if dirs > max {
            found.push(problem(
                "watcher",
                format!("`vx watch` would watch {dirs} directories but inotify allows {max} watches, so it polls"),
                raise(dirs),
            ));
        } else if dirs * 5 > max * 4 {
            // The limit is per user: an editor or a second watch beside vx
            // takes the rest, and vx then falls back to polling.
            found.push(problem(
                "watcher",
                format!("`vx watch` would watch {dirs} directories, over 80% of the {max} inotify watches allowed"),
                raise(dirs),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::facts::{Build, CacheInfo, PluginInfo, WorkspaceInfo};
    use super::super::system::{GuardSupport, SandboxSupport, WatcherSupport};
    use super::*;

    /// A report of a healthy machine with a workspace of one sandboxed task.
    fn healthy() -> Info {
        Info {
            version: "0",
            build: Build { profile: "debug", target: "x86_64-linux".into(), kernel: None },
            workspace: Some(WorkspaceInfo {
                root: PathBuf::from("/ws"),
                projects: 1,
                tasks: 1,
                env_mode: "strict",
                config: "vx.toml".into(),
                refused: Vec::new(),
                sandboxed_tasks: 1,
                sandboxed_without_network: 1,
            }),
            cache: None,
            history: None,
            remote: None,
            plugins: Vec::new(),
            guard: GuardSupport { procfs: true, pidfd: true, containment: "cgroup v2".into() },
            sandbox: SandboxSupport { landlock_abi: 4, user_namespaces: true, seccomp_user_notif: true },
            watcher: WatcherSupport {
                backend: "inotify".into(),
                max_user_watches: Some(8192),
                max_user_instances: Some(128),
                directories: Some(100),
            },
            problems: Vec::new(),
        }
    }

    fn found(info: &Info) -> Vec<(&'static str, String)> {
        find(info, None, None).into_iter().map(|p| (p.area, p.fix)).collect()
    }

    #[test]
    fn a_healthy_machine_has_no_problems() {
        assert!(found(&healthy()).is_empty());
    }

    #[test]
    fn too_few_inotify_watches_for_the_workspace_say_which_limit_to_raise() {
        let mut info = healthy();
        info.watcher.directories = Some(10_000);
        let problems = find(&info, None, None);
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].problem,
            "`vx watch` would watch 10000 directories but inotify allows 8192 watches, so it polls"
        );
        assert!(problems[0].fix.contains("sysctl fs.inotify.max_user_watches=524288"), "{:?}", problems[0]);
        info.watcher.directories = Some(7_000);
        let near = find(&info, None, None);
        assert_eq!(near.len(), 1, "near the limit is a problem too");
        assert!(near[0].problem.contains("over 80% of the 8192 inotify watches"), "{:?}", near[0]);
        info.watcher.directories = Some(6_000);
        assert!(find(&info, None, None).is_empty(), "well below it is not");
    }

    #[test]
    fn missing_kernel_features_are_problems_only_when_a_task_needs_them() {
        let mut info = healthy();
        info.sandbox = SandboxSupport { landlock_abi: 0, user_namespaces: false, seccomp_user_notif: false };
        let areas: Vec<_> = found(&info).into_iter().map(|(area, _)| area).collect();
        assert_eq!(areas, ["sandbox", "sandbox", "sandbox"]);
        info.workspace.as_mut().unwrap().sandboxed_tasks = 0;
        info.workspace.as_mut().unwrap().sandboxed_without_network = 0;
        assert!(found(&info).is_empty(), "no task asks for the sandbox");
    }

    #[test]
    fn a_guard_without_proc_or_pidfd_is_told_what_it_loses() {
        let mut info = healthy();
        info.guard = GuardSupport { procfs: false, pidfd: false, containment: "process-group sweep".into() };
        let problems = find(&info, None, None);
        assert_eq!(problems.len(), 2);
        assert!(problems[0].problem.contains("cannot be found and stopped"));
        assert!(problems[1].problem.contains("no CPU and memory figures"));
    }

    #[test]
    fn a_cache_over_its_size_and_plugins_that_do_not_load_or_lack_grants_each_get_their_fix() {
        let mut info = healthy();
        info.cache = Some(CacheInfo {
            dir: PathBuf::from("/ws/.vx/cache"),
            entries: 3,
            bytes: 2048,
            max_size: 1024,
            max_age_secs: 86_400,
            writable: true,
        });
        let plugin = |name: &str, state: &str, ungranted: &[&str]| PluginInfo {
            name: name.into(),
            world: "vx:plugin/reporter".into(),
            version: "0.1.0".into(),
            file: PathBuf::from(format!(".vx/plugins/{name}.wasm")),
            hash: None,
            state: state.into(),
            compiled: false,
            grants: Vec::new(),
            ungranted: ungranted.iter().map(|g| g.to_string()).collect(),
        };
        info.plugins = vec![
            plugin("gone", "unreadable (No such file or directory)", &[]),
            plugin("loose", "not pinned", &[]),
            plugin("tampered", "DOES NOT MATCH its pin", &[]),
            plugin("needy", "pinned ok", &["allow-hosts=api.example.com"]),
        ];
        let fixes: Vec<String> = found(&info).into_iter().map(|(area, fix)| format!("{area}: {fix}")).collect();
        assert_eq!(
            fixes,
            [
                "cache: run `vx cache gc` (a run does it too when it ends)",
                "plugins: mend `path` in [plugins.gone], or build the component it names",
                "plugins: pin it with `vx plugin add .vx/plugins/loose.wasm --name loose`",
                "plugins: if the new file is intended, re-pin it with `vx plugin add .vx/plugins/tampered.wasm --name tampered --force`",
                "plugins: add them to [plugins.needy] in vx.toml if you trust it (`vx plugin list` shows each)",
            ]
        );
    }
}
