//! Spawning a task: its own session (so its own process group, with no
//! controlling terminal), stdin closed, stdout and stderr on one pipe so the
//! log keeps the order in which lines were written.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Stdio;

use std::sync::Arc;

use tokio::net::unix::pipe;

use super::groups::Groups;
use super::link::own_group_and_register;
use crate::sandbox::Confinement;

/// What to run: an argv, a directory and the variables to add to vx's
/// environment, and the sandbox to run it in, if any.
#[derive(Debug, Clone)]
pub struct TaskCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// Applied between fork and exec, after the process has its group.
    pub confine: Option<Arc<Confinement>>,
}

/// A running task: its leader, its group and the read end of its output.
#[derive(Debug)]
pub struct TaskProcess {
    pub child: tokio::process::Child,
    pub pgid: i32,
    pub output: pipe::Receiver,
}

/// Spawns `cmd` in a new session and registers its group.
pub fn spawn_task(cmd: &TaskCommand, groups: &Groups) -> std::io::Result<TaskProcess> {
    spawn(cmd, groups, false)
}

/// Spawns a process with an environment of exactly `cmd.env`, nothing
/// inherited from vx, but otherwise like a task (its own session and
/// group, registered here and with the guard process): a task in strict
/// env mode, or a process an executor plugin asked for.
pub fn spawn_isolated(cmd: &TaskCommand, groups: &Groups) -> std::io::Result<TaskProcess> {
    spawn(cmd, groups, true)
}

/// `cmd` as a process of its own session and group, registered with the
/// guard between fork and exec, stdin closed; its environment is exactly
/// `cmd.env` with `clear_env`, else vx's plus `cmd.env`. Tasks and probes
/// both start from it and only choose where their output goes.
pub(super) fn guarded_command(cmd: &TaskCommand, clear_env: bool, groups: &Groups) -> std::process::Command {
    #[expect(clippy::disallowed_methods, reason = "the guard is the one place that spawns processes")]
    let mut command = std::process::Command::new(&cmd.program);
    if clear_env {
        command.env_clear();
    }
    command.args(&cmd.args).current_dir(&cmd.cwd).envs(cmd.env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null());
    // SAFETY: the hook is async-signal-safe and allocates nothing.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(own_group_and_register(groups.registration_fd()));
        if let Some(confine) = cmd.confine.clone() {
            command.pre_exec(move || confine.apply_in_child());
        }
    }
    command
}

fn spawn(cmd: &TaskCommand, groups: &Groups, clear_env: bool) -> std::io::Result<TaskProcess> {
    let (reader, writer) = std::io::pipe()?;
    let mut command = tokio::process::Command::from(guarded_command(cmd, clear_env, groups));
    command.stdout(writer.try_clone()?).stderr(writer).kill_on_drop(false);
    let child = command.spawn()?;
    // The command holds the write ends; dropping it leaves the child (and
    // whatever it starts) as the only writers, so EOF means they are gone.
    drop(command);
    let pgid = child
        .id()
        .map(|pid| pid as i32)
        .ok_or_else(|| std::io::Error::other("child exited before its pid was read"))?;
    groups.register(pgid);
    let output = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok(TaskProcess { child, pgid, output })
}
