//! The guard process (`vx __guard RUN_ID`): one per invocation, in its own
//! session, reading the pipe from vx. While the pipe is open it keeps the
//! list of live groups; when it closes (vx exited, or was killed with
//! SIGKILL) it stops everything still listed and exits.
//!
//! The sweep takes one snapshot of `/proc` and stops, in one pass: every
//! process in a listed group, every listed PID, every process whose
//! environment carries this invocation's `VX_RUN_ID` (a task's descendant
//! that left its group with `setsid` keeps it), and every descendant of
//! any of those. SIGTERM first, SIGKILL after `VX_KILL_GRACE_MS`. Then,
//! where vx made one (`cPATH` on the pipe), the run's cgroup is killed
//! whole and removed.

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::ladder::{grace_period, signal_group, signal_pid};
use super::link::RUN_ID_VAR;
use super::procfs::{ProcInfo, all_processes, has_env, read_proc};

/// Runs the guard until its stdin closes; returns the exit code.
pub(crate) fn guard_main(run_id: &str) -> u8 {
    // SAFETY: setting dispositions to SIG_IGN at start-up, single-threaded.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let mut groups = BTreeSet::new();
    let mut pids = BTreeSet::new();
    let mut cgroup = None;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(dir) = line.strip_prefix('c') {
            cgroup = Some(std::path::PathBuf::from(dir));
            continue;
        }
        let (op, num) = line.split_at(line.len().min(1));
        let Ok(num) = num.trim().parse::<i32>() else { continue };
        if num <= 1 {
            continue;
        }
        match op {
            "+" => {
                groups.insert(num);
            }
            "-" => {
                groups.remove(&num);
            }
            "=" => {
                pids.insert(num);
            }
            _ => {}
        }
    }
    sweep(run_id, &groups, &pids, grace_period());
    // What the sweep cannot see (a process that re-forked out of every
    // group and cleared its environment) is still in the run's cgroup.
    if let Some(dir) = cgroup.filter(|d| d.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vx-"))) {
        super::cgroup::kill_dir(&dir);
        super::cgroup::remove_when_empty(&dir);
    }
    0
}

/// Stops everything that belongs to the invocation. Public for tests of the
/// sweep itself.
pub(crate) fn sweep(run_id: &str, groups: &BTreeSet<i32>, pids: &BTreeSet<i32>, grace: Duration) {
    let marker = format!("{RUN_ID_VAR}={run_id}");
    let targets = targets(&all_processes(), groups, pids, &marker);
    if targets.is_empty() && groups.is_empty() {
        return;
    }
    send(&targets, groups, Signal::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && targets.iter().any(|&p| alive(p)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Anything forked during the grace period is caught by a second look.
    let late = self::targets(&all_processes(), groups, pids, &marker);
    send(&late.union(&targets).copied().collect(), groups, Signal::SIGKILL);
}

fn send(targets: &BTreeSet<i32>, groups: &BTreeSet<i32>, signal: Signal) {
    for &g in groups {
        signal_group(g, signal);
    }
    for &p in targets {
        if alive(p) {
            signal_pid(p, signal);
        }
    }
}

fn alive(pid: i32) -> bool {
    read_proc(pid).is_some_and(|p| p.state != 'Z')
}

/// The processes to stop, from one snapshot: members of `groups`, `pids`,
/// carriers of `marker`, and all their descendants. The guard itself and
/// its ancestors are never included.
fn targets(snapshot: &[ProcInfo], groups: &BTreeSet<i32>, pids: &BTreeSet<i32>, marker: &str) -> BTreeSet<i32> {
    let me = std::process::id() as i32;
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for p in snapshot {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut stack: Vec<i32> = snapshot
        .iter()
        .filter(|p| p.state != 'Z')
        .filter(|p| groups.contains(&p.pgid) || pids.contains(&p.pid) || has_env(p.pid, marker))
        .map(|p| p.pid)
        .collect();
    let mut out = BTreeSet::new();
    while let Some(pid) = stack.pop() {
        if pid != me && pid > 1 && out.insert(pid) {
            stack.extend(children.get(&pid).into_iter().flatten().copied());
        }
    }
    out
}
