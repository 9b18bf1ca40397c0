//! An executor for the host's tests, its behaviour chosen by `mode`:
//!
//! - `run` (default): the task's argv through `process`, output forwarded;
//! - `program`: runs `program` with `args` from the config instead;
//! - `leak`: starts the task's argv, forwards its first chunk of output
//!   (so it surely runs), and returns without waiting: vx must kill what
//!   was left running when the call ends;
//! - `drop`: the same, but drops the handle before returning.

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
            other => Err(Error::invalid_config(format!("config.mode: unknown mode `{other}`"))),
        }
    }
}

export_executor!(Testexec);
