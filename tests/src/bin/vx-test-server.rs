//! `vx-test-server --pid-file F [--port N] [--delay-ms D] [--log F]
//! [--name NAME] [--touch F]`: a stand-in for a dev server. It writes its
//! PID, waits D milliseconds (starting up), appends `NAME ready` to the
//! `--log` file, listens on 127.0.0.1:N, prints `NAME listening`, creates
//! the `--touch` file, then accepts and drops connections until killed.
//! The log line comes first so that whatever readiness rule vx uses, a
//! dependent that starts after readiness logs after it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use vx_tests::{append_line, my_pid, sleep_out, write_pids};

const USAGE: &str = "vx-test-server --pid-file F [--port N] [--delay-ms D] [--log F] [--name NAME] [--touch F]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let Some(pid_file) = value("--pid-file") else {
        eprintln!("usage: {USAGE}");
        std::process::exit(2)
    };
    let name = value("--name").unwrap_or_else(|| "server".to_string());
    write_pids(&PathBuf::from(pid_file), &[my_pid()]);
    let delay = value("--delay-ms").and_then(|d| d.parse().ok()).unwrap_or(0);
    std::thread::sleep(Duration::from_millis(delay));
    if let Some(log) = value("--log") {
        append_line(Path::new(&log), &format!("{name} ready"));
    }
    if let Some(port) = value("--port") {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>().expect("a port number")))
            .unwrap_or_else(|e| {
                eprintln!("{name}: cannot listen on port {port}: {e}");
                std::process::exit(1)
            });
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                drop(conn);
            }
        });
    }
    println!("{name} listening");
    std::io::stdout().flush().expect("flush stdout");
    if let Some(touch) = value("--touch") {
        std::fs::write(&touch, "").expect("create the --touch file");
    }
    sleep_out()
}
