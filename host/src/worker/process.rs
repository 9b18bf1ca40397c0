//! An action's command as a process under the guard: its own session and
//! group in the working directory, a small fixed environment plus the
//! command's own, the action's timeout, and nothing it started left running.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::error::LeaseError;
use super::lease::LeaseContext;
use crate::guard::{RUN_ID_VAR, TaskCommand, grace_period, spawn_isolated, stop_group};
use crate::paths::check_relative;
use crate::remote::re;

/// The command's working directory inside `dir`, created; the root itself
/// when the command names none.
pub(super) async fn working_dir(dir: &Path, command: &re::Command) -> Result<PathBuf, LeaseError> {
    if !command.working_directory.is_empty() {
        check_relative(&command.working_directory)?;
    }
    let workdir = dir.join(&command.working_directory);
    tokio::fs::create_dir_all(&workdir)
        .await
        .map_err(|e| LeaseError::Infra(format!("create the working directory: {e}")))?;
    Ok(workdir)
}

/// Runs the command to its end or its timeout; its exit code (128 + the
/// signal for one killed) and its output, stdout and stderr interleaved.
pub(super) async fn run(
    ctx: &LeaseContext,
    action: &re::Action,
    command: &re::Command,
    workdir: &Path,
) -> Result<(i32, Vec<u8>), LeaseError> {
    let task = task_command(ctx, command, workdir)?;
    let mut proc = spawn_isolated(&task, &ctx.groups)
        .map_err(|e| LeaseError::Bad(format!("could not start {:?}: {e}", task.program)))?;
    *ctx.pgid.lock().expect("pgid lock poisoned") = Some(proc.pgid);
    let mut log = Vec::new();
    let run = async {
        let _ = proc.output.read_to_end(&mut log).await;
        proc.child.wait().await
    };
    let exit = match timeout_of(action) {
        Some(t) => tokio::time::timeout(t, run).await.ok(),
        None => Some(run.await),
    };
    // Nothing the action started outlives it, whether it ended or timed out.
    stop_group(proc.pgid, grace_period()).await;
    ctx.groups.unregister(proc.pgid);
    let exit =
        exit.ok_or(LeaseError::Timeout)?.map_err(|e| LeaseError::Infra(format!("waiting for the action: {e}")))?;
    let exit_code =
        exit.code().unwrap_or_else(|| 128 + std::os::unix::process::ExitStatusExt::signal(&exit).unwrap_or(0));
    Ok((exit_code, log))
}

/// The process to start: a relative program path is the working
/// directory's; `PATH` is the worker's, `HOME` and `TMPDIR` the lease's
/// directory, then the command's own variables.
fn task_command(ctx: &LeaseContext, command: &re::Command, workdir: &Path) -> Result<TaskCommand, LeaseError> {
    let mut args = command.arguments.iter();
    let program = args.next().ok_or_else(|| LeaseError::Bad("the Command has no arguments".into()))?;
    let dir = ctx.dir.as_os_str();
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())),
        ("HOME".into(), dir.to_owned()),
        ("TMPDIR".into(), dir.to_owned()),
        (RUN_ID_VAR.into(), format!("worker-{}", ctx.bot_id).into()),
    ];
    env.extend(command.environment_variables.iter().map(|v| (v.name.clone().into(), v.value.clone().into())));
    let program = if program.contains('/') && !program.starts_with('/') {
        workdir.join(program).into_os_string()
    } else {
        program.into()
    };
    Ok(TaskCommand {
        program,
        args: args.map(Into::into).collect(),
        cwd: workdir.to_path_buf(),
        env,
        confine: None,
        terminal: false,
    })
}

/// The action's timeout; none when it sets none or zero.
fn timeout_of(action: &re::Action) -> Option<Duration> {
    action
        .timeout
        .as_ref()
        .map(|t| Duration::new(t.seconds.max(0) as u64, t.nanos.max(0) as u32))
        .filter(|t| !t.is_zero())
}
