//! `vx-test-stubborn PIDFILE [TERMFILE]`: survives SIGTERM, writes its PID
//! to PIDFILE and sleeps. Only SIGKILL stops it, so it shows whether the
//! kill ladder reaches its last step. Without TERMFILE it ignores SIGTERM;
//! with it, it catches SIGTERM and appends `TERM` to TERMFILE each time, so
//! a test can see that the ladder's first step reached it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{SigHandler, Signal, signal};
use vx_tests::{LIFETIME, arg, my_pid, write_pids};

static TERMED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_: nix::libc::c_int) {
    TERMED.store(true, Ordering::SeqCst);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = PathBuf::from(arg(&args, 1, "vx-test-stubborn PIDFILE [TERMFILE]"));
    let term_file = args.get(2).map(PathBuf::from);
    let handler = if term_file.is_some() { SigHandler::Handler(on_term) } else { SigHandler::SigIgn };
    // SAFETY: the handler only stores to an atomic.
    unsafe { signal(Signal::SIGTERM, handler) }.expect("handle SIGTERM");
    write_pids(&file, &[my_pid()]);
    let deadline = Instant::now() + LIFETIME;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        if let Some(path) = &term_file
            && TERMED.swap(false, Ordering::SeqCst)
        {
            vx_tests::append_line(path, "TERM");
        }
    }
}
