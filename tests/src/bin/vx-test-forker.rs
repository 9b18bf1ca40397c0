//! `vx-test-forker PIDFILE N [sleep|exit]`: forks N children that sleep,
//! writes its own PID then theirs to PIDFILE (one a line), then sleeps
//! (`sleep`, the default) or exits 0 leaving the children running (`exit`).
//! Every process here keeps its parent's process group, so a group kill
//! reaches them all.

use std::path::PathBuf;

use nix::unistd::{ForkResult, fork};
use vx_tests::{arg, my_pid, sleep_out, write_pids};

const USAGE: &str = "vx-test-forker PIDFILE N [sleep|exit]";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = PathBuf::from(arg(&args, 1, USAGE));
    let n: usize = arg(&args, 2, USAGE).parse().unwrap_or_else(|_| panic!("usage: {USAGE}"));
    let exit = args.get(3).is_some_and(|a| a == "exit");
    let mut pids = vec![my_pid()];
    for _ in 0..n {
        // SAFETY: single-threaded; the child only sleeps and exits.
        match unsafe { fork() }.expect("fork") {
            ForkResult::Child => sleep_out(),
            ForkResult::Parent { child } => pids.push(child.as_raw()),
        }
    }
    write_pids(&file, &pids);
    if exit {
        return;
    }
    sleep_out()
}
