//! `vx-test-stubborn PIDFILE`: ignores SIGTERM, writes its PID to PIDFILE
//! and sleeps. Only SIGKILL stops it, so it shows whether the kill ladder
//! reaches its last step.

use std::path::PathBuf;

use nix::sys::signal::{SigHandler, Signal, signal};
use vx_tests::{arg, my_pid, sleep_out, write_pids};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = PathBuf::from(arg(&args, 1, "vx-test-stubborn PIDFILE"));
    // SAFETY: ignoring a signal installs no handler code.
    unsafe { signal(Signal::SIGTERM, SigHandler::SigIgn) }.expect("ignore SIGTERM");
    write_pids(&file, &[my_pid()]);
    sleep_out()
}
