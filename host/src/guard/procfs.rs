//! What the guard reads from `/proc`: a process's parent, group, name and
//! state, whether its environment carries a given marker, and the most
//! recently assigned PID (so a task's escapees are looked for only among
//! the PIDs assigned while it ran, not among every process on the machine).

use std::io::Read;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub name: String,
    /// `Z` for a zombie, which no signal can stop any more.
    pub state: char,
}

/// Reads `/proc/PID/stat`; `None` when the process is gone.
pub(crate) fn read_proc(pid: i32) -> Option<ProcInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name is parenthesised and may contain spaces or parentheses.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let mut fields = stat[close + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(ProcInfo { pid, ppid, pgid, name: stat[open + 1..close].to_string(), state })
}

/// Whether `pid` is this process's parent, grandparent or further up.
pub(crate) fn is_ancestor(pid: i32) -> bool {
    let mut at = std::process::id() as i32;
    for _ in 0..256 {
        match read_proc(at) {
            Some(info) if info.ppid == pid => return true,
            Some(info) if info.ppid > 1 => at = info.ppid,
            _ => return false,
        }
    }
    false
}

/// Every process on the machine (threads excluded).
pub(crate) fn all_processes() -> Vec<ProcInfo> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
        .filter_map(read_proc)
        .collect()
}

/// The live (not zombie) processes of a process group.
pub(crate) fn group_members(pgid: i32) -> Vec<ProcInfo> {
    all_processes().into_iter().filter(|p| p.pgid == pgid && p.state != 'Z').collect()
}

/// Whether the process's environment (as it was at exec) holds `KEY=VALUE`.
pub(crate) fn has_env(pid: i32, entry: &str) -> bool {
    let Ok(mut file) = std::fs::File::open(format!("/proc/{pid}/environ")) else { return false };
    let mut buf = Vec::new();
    if file.read_to_end(&mut buf).is_err() {
        return false;
    }
    buf.split(|&b| b == 0).any(|e| e == entry.as_bytes())
}

/// The PID most recently assigned on the machine (`/proc/loadavg`).
pub(crate) fn last_pid() -> Option<i32> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// The largest PID the kernel assigns, for ranges that wrap around.
pub(crate) fn pid_max() -> i32 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max").ok().and_then(|t| t.trim().parse().ok()).unwrap_or(4_194_304)
}

/// PIDs assigned after `after` up to and including `until`, wrapping at
/// `pid_max`. A range longer than `limit` is cut (a busy machine forking
/// very fast); the caller then falls back to a full scan.
pub(crate) fn pids_between(after: i32, until: i32, limit: usize) -> Option<Vec<i32>> {
    let mut out = Vec::new();
    let mut push_range = |lo: i32, hi: i32| -> bool {
        for pid in lo..=hi {
            if out.len() >= limit {
                return false;
            }
            out.push(pid);
        }
        true
    };
    let complete = if until >= after {
        push_range(after + 1, until)
    } else {
        push_range(after + 1, pid_max()) && push_range(300, until)
    };
    complete.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_itself() {
        let me = std::process::id() as i32;
        let info = read_proc(me).expect("own stat is readable");
        assert_eq!(info.pid, me);
        assert!(info.ppid > 0);
        assert!(all_processes().iter().any(|p| p.pid == me));
        assert!(last_pid().is_some_and(|p| p > 0));
    }

    #[test]
    fn ranges_wrap_and_cap() {
        assert_eq!(pids_between(5, 8, 10), Some(vec![6, 7, 8]));
        assert_eq!(pids_between(5, 5, 10), Some(vec![]));
        assert_eq!(pids_between(1, 100, 10), None);
    }
}
