//! Facts about the machine, read once per process. `available_parallelism`
//! reads cgroup files on every call, which showed up in the profile of a
//! fully cached run when it was asked once per task.

use std::sync::OnceLock;

/// The number of cores vx may use (at least 1).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
