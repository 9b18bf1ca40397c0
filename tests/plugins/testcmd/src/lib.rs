//! A command plugin for `tests/integration/plugin_commands.rs`. Its first
//! argument picks what it does:
//!
//! - `projects`: one line per project of the workspace model;
//! - `history TASK`: the recent invocations, then `TASK`'s figures;
//! - `echo ARGS...`: the arguments, one per line, in brackets;
//! - `read PATH`: a file's contents (only under a granted dir);
//! - `env NAME`: a variable (only when granted);
//! - `exit N`: returns N;
//! - `fail`, `panic`, `spin`: an error value, a panic, an endless loop.

use vx_plugin_sdk::command::{Command, Usage, workspace};
use vx_plugin_sdk::{Describe, Error, NoConfig, PluginInfo, export_command};

struct TestCmd;

impl Describe for TestCmd {
    fn info() -> PluginInfo {
        PluginInfo::new("testcmd", env!("CARGO_PKG_VERSION"))
    }
}

impl Command for TestCmd {
    type Config = NoConfig;

    fn usage() -> Usage {
        Usage {
            about: "prints what vx lets a command plugin see".to_string(),
            help: "usage: vx testcmd projects|history TASK|echo ARGS|read PATH|env NAME|exit N|fail|panic|spin"
                .to_string(),
        }
    }

    fn run(_config: &NoConfig, args: Vec<String>) -> Result<u8, Error> {
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_default();
        match arg(0) {
            "projects" => {
                for p in workspace::projects() {
                    let tasks: Vec<String> = p
                        .tasks
                        .iter()
                        .map(|t| format!("{}={}", t.name, t.command.as_deref().unwrap_or("(group)")))
                        .collect();
                    println!(
                        "{} dir={} deps=[{}] dependents=[{}] tags=[{}] tasks=[{}]",
                        p.name,
                        p.dir,
                        p.dependencies.join(","),
                        p.dependents.join(","),
                        p.tags.join(","),
                        tasks.join(",")
                    );
                }
            }
            "history" => {
                for run in workspace::recent_invocations(10)? {
                    println!(
                        "invocation `{}` exit={} tasks={} cached={}",
                        run.command, run.exit_code, run.tasks, run.cached
                    );
                }
                let stats = workspace::task_stats(arg(1))?;
                println!(
                    "{}: executions={} flaky={} p50={}",
                    arg(1),
                    stats.executions,
                    stats.flaky,
                    stats.p50_ms.is_some()
                );
            }
            "echo" => {
                for a in &args[1..] {
                    println!("[{a}]");
                }
            }
            "read" => {
                let text = std::fs::read_to_string(arg(1)).map_err(|e| Error::denied(format!("{}: {e}", arg(1))))?;
                print!("{text}");
            }
            "env" => println!("{}={}", arg(1), std::env::var(arg(1)).unwrap_or_else(|_| "(unset)".to_string())),
            "exit" => {
                eprintln!("exiting with {}", arg(1));
                return arg(1).parse().map_err(|_| Error::failed(format!("`{}` is not an exit code", arg(1))));
            }
            "fail" => return Err(Error::unavailable("testcmd was told to fail")),
            "panic" => panic!("testcmd was told to panic"),
            #[allow(clippy::empty_loop)]
            "spin" => loop {},
            other => return Err(Error::failed(format!("unknown mode `{other}`"))),
        }
        Ok(0)
    }
}

export_command!(TestCmd);
