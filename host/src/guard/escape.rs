//! Escapees: a task's descendants that left its process group (`setsid`,
//! daemons), so a group kill misses them. Every task process carries the
//! invocation's `VX_RUN_ID` and its own `VX_PROJECT`/`VX_TASK` in its
//! environment, which its descendants inherit. When a task's group is gone,
//! vx looks for live processes with those markers among the PIDs assigned
//! while the task ran — a handful, not the whole machine — and stops them.
//!
//! What can still escape: a descendant that leaves the group *and* replaces
//! its environment (`env -i`, a double fork that clears it), and processes
//! that are not descendants at all (started through a daemon such as
//! dockerd or systemd-run). See docs/guard.md.

use super::link::RUN_ID_VAR;
use super::procfs::{ProcInfo, all_processes, has_env, pids_between, read_proc};

/// Longest PID range checked one by one before falling back to a full scan.
const RANGE_LIMIT: usize = 65_536;

/// Identifies one task's processes by their environment.
#[derive(Debug, Clone)]
pub(crate) struct TaskMark {
    pub run_id: String,
    pub project: String,
    pub task: String,
}

impl TaskMark {
    fn matches(&self, pid: i32) -> bool {
        has_env(pid, &format!("{RUN_ID_VAR}={}", self.run_id))
            && has_env(pid, &format!("VX_PROJECT={}", self.project))
            && has_env(pid, &format!("VX_TASK={}", self.task))
    }
}

/// Live processes of the task (outside its group, which is gone) whose
/// PIDs were assigned after `pid_before` and up to `pid_after`.
pub(crate) fn find_escapees(mark: &TaskMark, pid_before: i32, pid_after: i32) -> Vec<ProcInfo> {
    let candidates: Vec<ProcInfo> = match pids_between(pid_before, pid_after, RANGE_LIMIT) {
        Some(pids) => pids.into_iter().filter_map(read_proc).collect(),
        None => all_processes(),
    };
    candidates.into_iter().filter(|p| p.state != 'Z' && is_process(p.pid) && mark.matches(p.pid)).collect()
}

/// `/proc/TID` exists for threads too; only thread-group leaders count.
fn is_process(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Tgid:").map(|v| v.trim().parse::<i32>().ok())))
        .flatten()
        == Some(pid)
}
