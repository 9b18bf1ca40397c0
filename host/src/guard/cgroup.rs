//! Containment by cgroup v2, where vx can make one: each task runs in a
//! cgroup of its own, and what is left in it when the task ends is killed
//! at once with `cgroup.kill`.
//!
//! A process group and a session can be left (`setsid`), an environment
//! cleared (`env -i`), and a process that re-forks in a loop outruns any
//! sweep that lists processes and then signals them: the guard's sweep
//! (`super::escape`, `super::watchdog`) cannot catch it. A cgroup cannot
//! be left without privileges, and `cgroup.kill` kills every member,
//! however it forks, in one step of the kernel.
//!
//! Where: a `vx-PID-N` directory made beside vx's own cgroup's processes,
//! in the cgroup v2 hierarchy vx is in (`/proc/self/cgroup`, found through
//! `/proc/self/mountinfo`): writable as root, or in a user slice systemd
//! delegated. There is one per guard process (a session; `vx verify` and
//! `vx watch` run several in one vx), since each guard kills and removes
//! its directory when its session ends or vx goes, however vx goes: one
//! directory shared by a process's sessions was removed under the next
//! session's tasks (`ENODEV` at spawn). Each task's cgroup is
//! `vx-PID-N/tM`; the child moves itself into it between fork and exec
//! (writing `0` to `cgroup.procs`), so nothing it starts is ever outside.
//! Elsewhere (no cgroup v2, a read-only hierarchy) nothing changes: the
//! guard's sweep stays, and `vx info` says which is in force.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

/// One session's cgroup directory, under which each task gets one.
#[derive(Debug)]
pub(crate) struct RunCgroup {
    dir: PathBuf,
    next: AtomicU64,
}

/// A new cgroup directory for one session; `None` where vx cannot make
/// one. The first call of a process also clears what crashed vx
/// processes left.
pub(crate) fn run_cgroup() -> Option<RunCgroup> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let parent = PARENT
        .get_or_init(|| {
            let parent = own_cgroup_dir()?;
            remove_abandoned(&parent);
            Some(parent)
        })
        .as_ref()?;
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = parent.join(format!("vx-{}-{n}", std::process::id()));
    std::fs::create_dir(&dir).ok()?;
    Some(RunCgroup { dir, next: AtomicU64::new(0) })
}

/// What `vx info` says of containment: the cgroup directory in force, or
/// why the sweep is used instead.
pub(crate) fn describe() -> String {
    match own_cgroup_dir() {
        Some(dir) if writable(&dir) => {
            format!("cgroup v2: each task in a cgroup of its own under {}, ended with cgroup.kill", dir.display())
        }
        Some(dir) => format!(
            "process-group sweep: the cgroup v2 directory {} is not writable (run as root, or in a delegated user slice)",
            dir.display()
        ),
        None => "process-group sweep: no cgroup v2 hierarchy".to_string(),
    }
}

impl RunCgroup {
    /// The run's directory (for the guard process).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// A fresh cgroup for one task; `None` when it cannot be made.
    pub(crate) fn task(&self) -> Option<TaskCgroup> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let dir = self.dir.join(format!("t{n}"));
        std::fs::create_dir(&dir).ok()?;
        let procs = nix::fcntl::open(&dir.join("cgroup.procs"), OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::empty());
        match procs {
            Ok(procs) => Some(TaskCgroup { dir, procs }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }
}

/// One task's cgroup: children move in before they exec; what is left in
/// it is killed with [`TaskCgroup::kill`]. Dropping it kills what is
/// still in it and removes it, so whoever holds a spawned process must
/// hold its cgroup as long.
#[derive(Debug)]
pub(crate) struct TaskCgroup {
    dir: PathBuf,
    procs: OwnedFd,
}

impl TaskCgroup {
    /// The open `cgroup.procs` a forked child writes `0` to (itself).
    pub(crate) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Whether any process is still in it.
    pub(crate) fn populated(&self) -> bool {
        populated(&self.dir)
    }

    /// The pids in it now.
    pub(crate) fn members(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Kills everything in it, at once.
    pub(crate) fn kill(&self) {
        kill_dir(&self.dir);
    }
}

impl Drop for TaskCgroup {
    /// Kills what is left at once; the directory goes on a thread of its
    /// own, since a cgroup whose last process was just killed stays busy
    /// for a moment and a run must not wait on that per task (what a
    /// thread cut short by vx's exit leaves, the guard removes).
    fn drop(&mut self) {
        kill_dir(&self.dir);
        let dir = std::mem::take(&mut self.dir);
        if std::fs::remove_dir(&dir).is_err() {
            std::thread::spawn(move || remove_when_empty(&dir));
        }
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is open
/// as `fd`. For a child between fork and exec: async-signal-safe, no
/// allocation.
pub(crate) fn enter(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: write(2) of a static buffer to an fd the parent opened.
    let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
    if written == 1 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// Kills every process in the cgroup at `dir` and below: `cgroup.kill`
/// where the kernel has it (5.14), else each listed process with SIGKILL
/// until none is left.
pub(crate) fn kill_dir(dir: &Path) {
    if std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    for _ in 0..100 {
        let pids = list_all(dir);
        if pids.is_empty() {
            return;
        }
        for pid in pids {
            super::ladder::signal_pid(pid, nix::sys::signal::Signal::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Removes the cgroup at `dir` and the ones below it once their processes
/// are gone (a killed process leaves its cgroup a moment later).
pub(crate) fn remove_when_empty(dir: &Path) {
    for _ in 0..200 {
        if remove_tree(dir) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Removes `dir` and its sub-cgroups, deepest first; whether it is gone.
fn remove_tree(dir: &Path) -> bool {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&entry.path());
            }
        }
    }
    match std::fs::remove_dir(dir) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Removes the cgroups of vx processes that are gone and whose guard went
/// with them (both killed at once): whatever was left in them is killed
/// first, so a crash leaves neither processes nor directories for long.
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = owner_pid(&name.to_string_lossy()) else { continue };
        if pid != std::process::id() as i32 && !super::ladder::pid_alive(pid) {
            kill_dir(&entry.path());
            remove_tree(&entry.path());
        }
    }
}

/// The vx process a `vx-PID-N` directory was made by.
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("vx-")?;
    rest.split('-').next()?.parse().ok()
}

/// Every pid in the cgroup at `dir` and below.
fn list_all(dir: &Path) -> Vec<i32> {
    let mut pids: Vec<i32> = std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
            pids.extend(list_all(&entry.path()));
        }
    }
    pids
}

fn populated(dir: &Path) -> bool {
    match std::fs::read_to_string(dir.join("cgroup.events")) {
        Ok(events) => events.lines().any(|l| l.trim() == "populated 1"),
        Err(_) => !list_all(dir).is_empty(),
    }
}

fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}

/// The directory of vx's own cgroup in the cgroup v2 hierarchy, when
/// there is one.
fn own_cgroup_dir() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|line| {
        // `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE SUPER`
        let (left, right) = line.split_once(" - ")?;
        (right.split_whitespace().next()? == "cgroup2").then(|| left.split_whitespace().nth(4).map(str::to_string))?
    })?;
    let dir = Path::new(&mount).join(path.trim_start_matches('/'));
    dir.is_dir().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_cgroup_holds_what_its_child_forks_and_kill_ends_it() {
        let Some(run) = run_cgroup() else {
            // No writable cgroup v2 here: `describe` must say the sweep.
            assert!(describe().starts_with("process-group sweep"), "{}", describe());
            return;
        };
        let cg = run.task().expect("a task cgroup");
        let fd = cg.procs_fd();
        #[expect(clippy::disallowed_methods, reason = "a unit test of the guard's own containment")]
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "setsid sleep 30 & setsid sleep 30 & wait"]);
        // SAFETY: `enter` is async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || enter(fd));
        }
        let mut child = cmd.spawn().expect("spawn");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while cg.members().len() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(cg.members().len(), 3, "the shell and both sleeps, new sessions and all");
        cg.kill();
        let _ = child.wait();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while cg.populated() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!cg.populated(), "everything in it was killed");
        let dir = cg.dir.clone();
        drop(cg);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while dir.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!dir.exists(), "removed once dropped");
    }
}
