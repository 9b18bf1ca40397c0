//! The `process` import: executor plugins start processes through vx, never
//! through WASI. Each spawn is checked against `allow-programs`, gets an
//! environment of the task's declared variables and the plugin's granted
//! ones (nothing else of vx's), and starts through the guard in its own
//! process group, registered with the guard process, so no child outlives
//! vx. A child's group is killed when the plugin drops its handle, when the
//! call ends with it still open (the instance is then not reused, `pool`),
//! or when the task is stopped (timeout, Ctrl-C).
//!
//! A child's stdout and stderr share one pipe, as a local task's do, so the
//! order of lines is kept; its output arrives as `stdout`.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use nix::sys::signal::Signal;
use tokio::io::AsyncReadExt;
use wasmtime::component::Resource;

use super::bindings::executor::vx::plugin::process;
use super::bindings::{StreamKind, WitError};
use super::grants::ProgramGrant;
use super::state::State;
use crate::guard::{Groups, TaskCommand, grace_period, group_alive, signal_group, spawn_isolated, stop_group};

/// Output is handed to the plugin in chunks of at most this size.
const OUTPUT_CHUNK: usize = 64 << 10;

/// What the `process` import knows about the task being executed.
#[derive(Debug, Clone)]
pub struct ExecContext {
    /// The workspace root, canonical; `command.cwd` is relative to it.
    pub root: PathBuf,
    /// The task's directory, the default cwd.
    pub task_dir: PathBuf,
    /// Every child's environment before the granted variables and the
    /// command's own: the task's declared variables, `PATH`, and vx's
    /// markers (`VX_PROJECT`, `VX_TASK`, `VX_RUN_ID`).
    pub env: Vec<(OsString, OsString)>,
    /// Where bare program names are looked up (the task's `PATH`).
    pub path: OsString,
    pub groups: Groups,
    pub control: ExecControl,
    /// The runtime that drives children's pipes and exits.
    pub runtime: tokio::runtime::Handle,
}

/// Shared between a running `execute` call and the task that waits for it:
/// the groups the plugin started, and a flag that stops the call.
#[derive(Debug, Clone, Default)]
pub struct ExecControl {
    pub cancel: Arc<AtomicBool>,
    pub pgids: Arc<Mutex<Vec<i32>>>,
}

/// A process an executor started. Dropping it kills its group.
pub struct ChildProcess {
    child: tokio::process::Child,
    pgid: i32,
    output: Option<tokio::net::unix::pipe::Receiver>,
    status: Option<i32>,
    groups: Groups,
    runtime: tokio::runtime::Handle,
    /// Held for the child's life: dropping it kills what is in it.
    _cgroup: Option<crate::guard::TaskCgroup>,
}

impl std::fmt::Debug for ChildProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildProcess").field("pgid", &self.pgid).finish_non_exhaustive()
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if group_alive(self.pgid) {
            signal_group(self.pgid, Signal::SIGKILL);
        }
        let _ = self.child.start_kill();
        self.groups.unregister(self.pgid);
    }
}

/// Whether `path` names an executable file.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` looked up on `path_var`, as `execvp` would.
fn find_on_path(name: &str, path_var: &OsString) -> Option<PathBuf> {
    std::env::split_paths(path_var).map(|dir| dir.join(name)).find(|p| p.is_absolute() && is_executable(p))
}

/// The grant that allows `program args`, and the file to execute; a
/// refusal names the key that would allow it.
pub(crate) fn check_program(
    plugin: &str,
    grants: &[ProgramGrant],
    program: &str,
    args: &[String],
    path_var: &OsString,
) -> Result<PathBuf, WitError> {
    let key = format!("[plugins.{plugin}].allow-programs");
    let named: Vec<&ProgramGrant> = grants.iter().filter(|g| g.program == program).collect();
    if named.is_empty() {
        return Err(WitError::Denied(format!(
            "`{program}` is not in {key}; add \"{program}\" to it in vx.toml to let `{plugin}` run it"
        )));
    }
    if !named.iter().any(|g| g.allows_args(args)) {
        let allowed: Vec<String> = named.iter().map(|g| g.describe()).collect();
        return Err(WitError::Denied(format!(
            "`{program}` with arguments {args:?} does not match {key} ({}); widen the `args` pattern in vx.toml",
            allowed.join(", ")
        )));
    }
    if program.starts_with('/') {
        return if is_executable(Path::new(program)) {
            Ok(PathBuf::from(program))
        } else {
            Err(WitError::Failed(format!("`{program}` is not an executable file")))
        };
    }
    find_on_path(program, path_var)
        .ok_or_else(|| WitError::Failed(format!("`{program}` was not found on the task's PATH")))
}

/// A workspace-relative directory that exists and stays inside the workspace.
fn resolve_cwd(ctx: &ExecContext, cwd: Option<&str>) -> Result<PathBuf, WitError> {
    let Some(rel) = cwd else { return Ok(ctx.task_dir.clone()) };
    let path = Path::new(rel);
    if path.is_absolute() || path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(WitError::Denied(format!("cwd `{rel}` must be a workspace-relative path without `..`")));
    }
    let dir = ctx.root.join(path).canonicalize().map_err(|e| WitError::Failed(format!("cwd `{rel}`: {e}")))?;
    if !dir.starts_with(&ctx.root) || !dir.is_dir() {
        return Err(WitError::Denied(format!("cwd `{rel}` is not a directory inside the workspace")));
    }
    Ok(dir)
}

fn stale() -> WitError {
    WitError::Failed("invalid child handle".to_string())
}

impl process::Host for State {
    fn spawn(&mut self, cmd: process::Command) -> Result<Resource<ChildProcess>, WitError> {
        let plugin = self.plugin.clone();
        let Some(ctx) = self.exec.clone() else {
            return Err(WitError::Denied("processes can only be started while executing a task".to_string()));
        };
        let program = check_program(&plugin.name, &plugin.grants.programs, &cmd.program, &cmd.args, &ctx.path)?;
        let cwd = resolve_cwd(&ctx, cmd.cwd.as_deref())?;
        let mut env = ctx.env.clone();
        for name in &plugin.grants.env {
            if let Some(value) = std::env::var_os(name) {
                env.push((name.into(), value));
            }
        }
        env.extend(cmd.env.into_iter().map(|(k, v)| (k.into(), v.into())));
        let command = TaskCommand {
            program: program.into_os_string(),
            args: cmd.args.into_iter().map(Into::into).collect(),
            cwd,
            env,
            confine: None,
            terminal: false,
        };
        let spawned = {
            let _entered = ctx.runtime.enter();
            spawn_isolated(&command, &ctx.groups)
        };
        let proc = spawned.map_err(|e| WitError::Failed(format!("could not start `{}`: {e}", cmd.program)))?;
        ctx.control.pgids.lock().expect("pgids lock poisoned").push(proc.pgid);
        let child = ChildProcess {
            child: proc.child,
            pgid: proc.pgid,
            output: Some(proc.output),
            status: None,
            groups: ctx.groups.clone(),
            runtime: ctx.runtime.clone(),
            _cgroup: proc.cgroup,
        };
        let handle = self.table.push(child).map_err(|e| WitError::Failed(format!("too many children: {e}")))?;
        self.children += 1;
        Ok(handle)
    }
}

impl process::HostChild for State {
    fn next_output(&mut self, child: Resource<ChildProcess>) -> Result<Option<(StreamKind, Vec<u8>)>, WitError> {
        let child = self.table.get_mut(&child).map_err(|_| stale())?;
        let runtime = child.runtime.clone();
        let Some(output) = child.output.as_mut() else { return Ok(None) };
        let mut buf = vec![0u8; OUTPUT_CHUNK];
        match runtime.block_on(output.read(&mut buf)) {
            Ok(0) => {
                child.output = None;
                Ok(None)
            }
            Ok(n) => {
                buf.truncate(n);
                Ok(Some((StreamKind::Stdout, buf)))
            }
            Err(e) => {
                child.output = None;
                Err(WitError::Failed(format!("reading the child's output: {e}")))
            }
        }
    }

    fn wait(&mut self, child: Resource<ChildProcess>) -> Result<i32, WitError> {
        use std::os::unix::process::ExitStatusExt;
        let child = self.table.get_mut(&child).map_err(|_| stale())?;
        if let Some(code) = child.status {
            return Ok(code);
        }
        let runtime = child.runtime.clone();
        let status = runtime.block_on(child.child.wait()).map_err(|e| WitError::Failed(format!("wait: {e}")))?;
        let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(-1);
        child.status = Some(code);
        Ok(code)
    }

    fn kill(&mut self, child: Resource<ChildProcess>) {
        if let Ok(child) = self.table.get_mut(&child) {
            let runtime = child.runtime.clone();
            runtime.block_on(stop_group(child.pgid, grace_period()));
        }
    }

    fn drop(&mut self, child: Resource<ChildProcess>) -> wasmtime::Result<()> {
        self.table.delete(child)?;
        self.children = self.children.saturating_sub(1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(program: &str, args: Option<&[&str]>) -> ProgramGrant {
        ProgramGrant { program: program.into(), args: args.map(|a| a.iter().map(|s| s.to_string()).collect()) }
    }

    #[test]
    fn programs_are_checked_by_name_args_and_path() {
        let path = OsString::from("/usr/bin:/bin");
        let grants = [grant("sh", Some(&["-c", "*"]))];
        let ok = check_program("sb", &grants, "sh", &["-c".into(), "true".into()], &path).unwrap();
        assert!(ok.is_absolute() && ok.ends_with("sh"), "{ok:?}");
        let WitError::Denied(m) = check_program("sb", &grants, "env", &[], &path).unwrap_err() else { panic!() };
        assert!(m.contains("add \"env\" to it") && m.contains("[plugins.sb].allow-programs"), "{m}");
        let WitError::Denied(m) = check_program("sb", &grants, "sh", &["-x".into()], &path).unwrap_err() else {
            panic!()
        };
        assert!(m.contains("does not match"), "{m}");
        let err = check_program("sb", &[grant("/bin/sh", None)], "sh", &[], &path).unwrap_err();
        assert!(matches!(err, WitError::Denied(_)), "a path grant does not allow the bare name");
        assert!(check_program("sb", &[grant("nope-not-here", None)], "nope-not-here", &[], &path).is_err());
    }
}
