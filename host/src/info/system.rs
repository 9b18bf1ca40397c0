//! What this kernel offers the guard, the sandbox and the watcher, asked
//! the way each of them asks: by making the call (a `pidfd_open` of vx
//! itself, Landlock's version query) or by reading the kernel's own limits
//! under `/proc/sys`. Nothing here changes the process.

use std::path::Path;

use serde::Serialize;

/// The guard's needs: `/proc` (its sweep and the escapee search read every
/// process's environment there) and pidfds (resource use per task).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GuardSupport {
    /// `/proc/self/environ` is readable.
    pub procfs: bool,
    /// `pidfd_open` works (Linux 5.3); without it tasks have no CPU and memory figures.
    pub pidfd: bool,
    /// How a task's escaped processes are ended: a cgroup v2 of its own,
    /// or the process-group sweep (and why).
    pub containment: String,
}

/// The sandbox's needs (docs/sandbox.md): Landlock, an unprivileged user
/// namespace for `network = false`, and seccomp user notification for
/// naming what a task touched.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SandboxSupport {
    /// The Landlock ABI version, 0 when the kernel has none.
    pub landlock_abi: i32,
    pub user_namespaces: bool,
    pub seccomp_user_notif: bool,
}

/// The OS watcher `vx watch` uses and the kernel's inotify limits.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WatcherSupport {
    /// `inotify`, or `polling every N ms` when `VX_WATCH_POLL` is set.
    pub backend: String,
    pub max_user_watches: Option<u64>,
    pub max_user_instances: Option<u64>,
    /// Directories `vx watch` watches under the root: one inotify watch
    /// each.
    pub directories: Option<u64>,
}

pub(crate) fn guard() -> GuardSupport {
    GuardSupport {
        procfs: std::fs::File::open("/proc/self/environ").is_ok(),
        pidfd: pidfd_works(),
        containment: crate::guard::containment(),
    }
}

fn pidfd_works() -> bool {
    // SAFETY: pidfd_open takes a pid and flags; the descriptor it returns
    // is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, std::process::id() as libc::pid_t, 0) };
    if fd < 0 {
        return false;
    }
    // SAFETY: `fd` is the descriptor just opened and owned by nobody else.
    unsafe { libc::close(fd as libc::c_int) };
    true
}

pub(crate) fn sandbox() -> SandboxSupport {
    SandboxSupport {
        landlock_abi: crate::sandbox::landlock_abi(),
        user_namespaces: user_namespaces(),
        seccomp_user_notif: read_sys("kernel/seccomp/actions_avail").is_some_and(|a| a.contains("user_notif")),
    }
}

/// Whether an unprivileged process may make a user namespace: the limit
/// is above zero and neither Debian's switch nor AppArmor's restriction
/// forbids it.
fn user_namespaces() -> bool {
    let allowed = |file: &str, yes: bool| read_number(file).is_none_or(|v| (v > 0) == yes);
    allowed("user/max_user_namespaces", true)
        && allowed("kernel/unprivileged_userns_clone", true)
        && allowed("kernel/apparmor_restrict_unprivileged_userns", false)
}

pub(crate) fn watcher(root: Option<&Path>) -> WatcherSupport {
    let backend = match std::env::var("VX_WATCH_POLL") {
        Ok(ms) => format!("polling every {} ms (VX_WATCH_POLL)", ms.trim()),
        Err(_) => "inotify".to_string(),
    };
    WatcherSupport {
        backend,
        max_user_watches: read_number("fs/inotify/max_user_watches"),
        max_user_instances: read_number("fs/inotify/max_user_instances"),
        directories: root.map(count_directories),
    }
}

/// The directories `vx watch` would watch under `root`, one inotify
/// watch each (no `node_modules`, `.git`, `.vx` or ignored directory).
fn count_directories(root: &Path) -> u64 {
    crate::watch::watched_dirs(root, root).len() as u64
}

/// The kernel's release, as `uname -r` prints it.
pub(crate) fn kernel() -> Option<String> {
    read_sys("kernel/osrelease").map(|s| s.trim().to_string())
}

fn read_sys(file: &str) -> Option<String> {
    std::fs::read_to_string(Path::new("/proc/sys").join(file)).ok()
}

fn read_number(file: &str) -> Option<u64> {
    read_sys(file)?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_counted_with_the_root_and_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::create_dir_all(dir.path().join("c")).unwrap();
        std::fs::write(dir.path().join("a/file"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("link")).unwrap();
        assert_eq!(count_directories(dir.path()), 4);
    }

    #[test]
    fn this_kernel_answers_the_probes_vx_is_tested_on() {
        // The machines vx is tested on are Linux 5.13 or later.
        assert!(guard().procfs);
        assert!(guard().pidfd);
        assert!(sandbox().landlock_abi >= 1);
        assert!(kernel().is_some_and(|k| !k.is_empty()));
    }
}
