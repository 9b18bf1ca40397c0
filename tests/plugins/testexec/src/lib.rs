//! An executor for the host's tests, its behaviour chosen by `mode`:
//!
//! - `run` (default): the task's argv through `process`, output forwarded;
//! - `program`: runs `program` with `args` from the config instead;
//! - `leak`: starts the task's argv, forwards its first chunk of output
//!   (so it surely runs), and returns without waiting: vx must kill what
//!   was left running when the call ends;
//! - `drop`: the same, but drops the handle before returning;
//! - hostile (the `hostile` crate): `spin`, `alloc` (1 GiB), `recurse`,
//!   `flood` (endless output lines), `flood-log`, `not-utf8` (an error
//!   value that is not UTF-8), `exit-code` (returns `code` without running
//!   anything), `escape` (the escape attempts and the `process` ones below,
//!   logged; `port` is the test's listener), `exit` (calls `exit(3)`).

use serde::Deserialize;
use vx_plugin_sdk::executor::{Command, Executor, Outcome, OutputSink, StreamKind, Task, forward_output, spawn};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_executor};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    mode: Option<String>,
    program: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    code: Option<i32>,
    port: Option<u16>,
}

/// Spawns through vx's `process` import, as a probe line.
fn try_spawn(name: &str, command: &Command) -> String {
    let result = spawn(command).and_then(|child| {
        let mut text = Vec::new();
        while let Some((_, data)) = child.next_output()? {
            text.extend_from_slice(&data);
        }
        Ok(format!("exit {} {}", child.wait()?, String::from_utf8_lossy(&text).trim()))
    });
    match result {
        Ok(what) => format!("probe {name}: ok: {what}"),
        Err(e) => format!("probe {name}: refused: {e:?}"),
    }
}

/// Ways out through `process`; the test grants only `sh -c pwd`.
fn process_probe() {
    let pwd = || Command::new("sh").args(["-c", "pwd"]);
    let probes = [
        try_spawn("vx-spawn-granted", &pwd()),
        try_spawn("vx-spawn-other", &Command::new("env")),
        try_spawn("vx-spawn-args", &Command::new("sh").args(["-c", "cat /etc/passwd"])),
        try_spawn("vx-spawn-path", &Command::new("/bin/sh").args(["-c", "pwd"])),
        try_spawn("vx-spawn-cwd-dotdot", &pwd().cwd("..")),
        try_spawn("vx-spawn-cwd-absolute", &pwd().cwd("/")),
        try_spawn("vx-spawn-cwd-symlink", &pwd().cwd("data/root")),
    ];
    for text in probes {
        vx_plugin_sdk::log::warn(&text);
    }
}

struct Testexec;

impl Describe for Testexec {
    fn info() -> PluginInfo {
        PluginInfo::new("testexec", "0.1.0").request("allow-programs=sh")
    }
}

fn task_command(task: &Task) -> Result<Command, Error> {
    let (program, args) = task.argv.split_first().ok_or_else(|| Error::failed("empty argv"))?;
    Ok(Command::new(program.as_str()).args(args.iter().cloned()))
}

impl Executor for Testexec {
    type Config = Config;

    fn execute(config: &Config, task: Task, out: &OutputSink) -> Result<Outcome, Error> {
        let done = |exit_code| Ok(Outcome { exit_code, duration_ms: 1 });
        match config.mode.as_deref().unwrap_or("run") {
            "run" => {
                let child = spawn(&task_command(&task)?)?;
                done(forward_output(&child, out)?)
            }
            "program" => {
                let program = config.program.clone().unwrap_or_default();
                let child = spawn(&Command::new(program).args(config.args.iter().cloned()))?;
                done(forward_output(&child, out)?)
            }
            "leak" => {
                let child = spawn(&task_command(&task)?)?;
                if let Some((kind, data)) = child.next_output()? {
                    out.write(kind, &data);
                }
                std::mem::forget(child);
                out.write(StreamKind::Stdout, b"returned without waiting\n");
                done(0)
            }
            "drop" => {
                let child = spawn(&task_command(&task)?)?;
                if let Some((kind, data)) = child.next_output()? {
                    out.write(kind, &data);
                }
                drop(child);
                out.write(StreamKind::Stdout, b"dropped the child\n");
                done(0)
            }
            "spin" => hostile::spin(),
            "alloc" => done(hostile::alloc_gib() as i32 - 1),
            "recurse" => done(hostile::recurse(0) as i32),
            "flood" => {
                let line = format!("{}\n", "z".repeat(1023));
                loop {
                    out.write(StreamKind::Stdout, line.as_bytes());
                }
            }
            "flood-log" => {
                hostile::flood_log(300);
                done(0)
            }
            "not-utf8" => Err(Error::failed(hostile::not_utf8())),
            "exit-code" => done(config.code.unwrap_or(-1)),
            "escape" => {
                hostile::log_probe(config.port.unwrap_or(9));
                process_probe();
                done(0)
            }
            "exit" => std::process::exit(3),
            other => Err(Error::invalid_config(format!("config.mode: unknown mode `{other}`"))),
        }
    }
}

export_executor!(Testexec);
