//! Facts about the machine, read once per process. `available_parallelism`
//! reads cgroup files on every call, which showed up in the profile of a
//! fully cached run when it was asked once per task.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once vx has been told to stop (SIGINT, SIGTERM, SIGHUP): long
/// waits that cannot hold a signal handler of their own (a plugin's call,
/// checked at each epoch tick) give up when they see it.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Marks the process as stopping (see [`stopping`]).
pub(crate) fn request_stop() {
    STOPPING.store(true, Ordering::SeqCst);
}

/// Whether vx has been told to stop.
pub(crate) fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// The number of cores vx may use (at least 1).
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The memory tasks may use, in bytes: the machine's (`MemTotal`), or the
/// cgroup's limit when it is lower (a container). `None` when neither can
/// be read.
pub(crate) fn physical_memory() -> Option<u64> {
    static MEMORY: OnceLock<Option<u64>> = OnceLock::new();
    *MEMORY.get_or_init(|| {
        let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        });
        let cgroup =
            std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse::<u64>().ok());
        match (total, cgroup) {
            (Some(t), Some(c)) => Some(t.min(c)),
            (t, c) => t.or(c),
        }
    })
}
