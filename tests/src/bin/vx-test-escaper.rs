//! `vx-test-escaper PIDFILE [--double] [--stay]`: forks a child that calls
//! `setsid`, leaving the task's process group and session, as daemons do.
//! With `--double` that child forks once more and exits, so the escapee is
//! an orphan too. The escapee writes the parent's PID and its own to
//! PIDFILE and sleeps; the parent waits for the file, then exits (or, with
//! `--stay`, sleeps as well).

use std::path::PathBuf;
use std::time::Duration;

use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, fork, setsid};
use vx_tests::{arg, my_pid, sleep_out, wait_for_file, write_pids};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = PathBuf::from(arg(&args, 1, "vx-test-escaper PIDFILE [--double] [--stay]"));
    let double = args.iter().any(|a| a == "--double");
    let stay = args.iter().any(|a| a == "--stay");
    let parent = my_pid();
    // SAFETY: single-threaded; the child forks, writes a file and sleeps.
    match unsafe { fork() }.expect("fork") {
        ForkResult::Child => {
            setsid().expect("setsid");
            if double {
                // SAFETY: as above.
                if let ForkResult::Parent { .. } = unsafe { fork() }.expect("fork") {
                    std::process::exit(0);
                }
            }
            write_pids(&file, &[parent, my_pid()]);
            sleep_out()
        }
        ForkResult::Parent { child } => {
            if double {
                waitpid(child, None).expect("wait for the intermediate child");
            }
            if !wait_for_file(&file, Duration::from_secs(60)) {
                eprintln!("vx-test-escaper: the escapee never wrote {}", file.display());
                std::process::exit(1);
            }
            if stay {
                sleep_out()
            }
        }
    }
}
