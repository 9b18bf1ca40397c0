//! Spawning a task: its own session (so its own process group, with no
//! controlling terminal), stdin closed, stdout and stderr on one pipe so the
//! log keeps the order in which lines were written. An interactive task
//! (`interactive = true`) gets a pseudo-terminal instead: its stdin, stdout
//! and stderr are the pty, which is its controlling terminal, and vx keeps
//! the other end to read its output and to type into it.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Stdio;

use std::sync::Arc;

use tokio::net::unix::pipe;

use super::groups::Groups;
use super::link::own_group_and_register;

/// Something done in a task's process between fork and exec, once it has
/// its group and cgroup: the guard owns the hook, the sandbox fills it (so
/// the guard, the ground floor, imports nothing above it).
pub(crate) trait PreExec: std::fmt::Debug + Send + Sync {
    /// Runs in the child: async-signal-safe system calls only, on data
    /// prepared before the fork.
    fn apply_in_child(&self) -> std::io::Result<()>;
}

/// What to run: an argv, a directory and the variables to add to vx's
/// environment, and the sandbox to run it in, if any.
#[derive(Debug, Clone)]
pub(crate) struct TaskCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// Applied between fork and exec, after the process has its group
    /// (the sandbox's confinement).
    pub confine: Option<Arc<dyn PreExec>>,
    /// Run on a pseudo-terminal of its own (an interactive task).
    pub terminal: bool,
}

/// A running task: its leader, its group and the read end of its output.
#[derive(Debug)]
pub(crate) struct TaskProcess {
    pub child: tokio::process::Child,
    pub pgid: i32,
    pub output: pipe::Receiver,
    /// The pty's side vx writes to: what is written is the task's input.
    /// Only for a task on a terminal.
    pub input: Option<std::fs::File>,
    /// The task's cgroup, where vx can make one (`super::cgroup`).
    pub cgroup: Option<super::cgroup::TaskCgroup>,
}

/// The size of a task's pseudo-terminal: what the TUI's log pane shows.
const PTY_SIZE: libc::winsize = libc::winsize { ws_row: 30, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };

/// Spawns `cmd` in a new session and registers its group.
pub(crate) fn spawn_task(cmd: &TaskCommand, groups: &Groups) -> std::io::Result<TaskProcess> {
    spawn(cmd, groups, false)
}

/// Spawns a process with an environment of exactly `cmd.env`, nothing
/// inherited from vx, but otherwise like a task (its own session and
/// group, registered here and with the guard process): a task in strict
/// env mode, or a process an executor plugin asked for.
pub(crate) fn spawn_isolated(cmd: &TaskCommand, groups: &Groups) -> std::io::Result<TaskProcess> {
    spawn(cmd, groups, true)
}

/// `cmd` as a process of its own session and group, registered with the
/// guard between fork and exec, stdin closed; its environment is exactly
/// `cmd.env` with `clear_env`, else vx's plus `cmd.env`. Tasks and probes
/// both start from it and only choose where their output goes.
pub(super) fn guarded_command(cmd: &TaskCommand, clear_env: bool, groups: &Groups) -> std::process::Command {
    guarded_command_in(cmd, clear_env, groups, None)
}

/// [`guarded_command`], the child moving itself into the cgroup whose
/// `cgroup.procs` is open as `cgroup` before it execs.
fn guarded_command_in(
    cmd: &TaskCommand,
    clear_env: bool,
    groups: &Groups,
    cgroup: Option<std::os::fd::RawFd>,
) -> std::process::Command {
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
        if let Some(fd) = cgroup {
            command.pre_exec(move || super::cgroup::enter(fd));
        }
        if let Some(confine) = cmd.confine.clone() {
            command.pre_exec(move || confine.apply_in_child());
        }
    }
    command
}

fn spawn(cmd: &TaskCommand, groups: &Groups, clear_env: bool) -> std::io::Result<TaskProcess> {
    let cgroup = groups.task_cgroup();
    let fd = cgroup.as_ref().map(super::cgroup::TaskCgroup::procs_fd);
    if cmd.terminal {
        return spawn_on_terminal(cmd, groups, clear_env, cgroup);
    }
    let (reader, writer) = std::io::pipe()?;
    let mut command = tokio::process::Command::from(guarded_command_in(cmd, clear_env, groups, fd));
    command.stdout(writer.try_clone()?).stderr(writer).kill_on_drop(false);
    let (child, pgid) = spawn_registered(command, groups)?;
    let output = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok(TaskProcess { child, pgid, output, input: None, cgroup })
}

/// Like [`spawn`], on a new pseudo-terminal: the child's three standard
/// streams are its pty, made its controlling terminal once `setsid` has
/// given it a session of its own (so a shell's job control and a prompt
/// library's raw mode work, and Ctrl-C typed in the TUI reaches its group
/// as SIGINT from its terminal driver).
fn spawn_on_terminal(
    cmd: &TaskCommand,
    groups: &Groups,
    clear_env: bool,
    cgroup: Option<super::cgroup::TaskCgroup>,
) -> std::io::Result<TaskProcess> {
    let (master, slave) = open_pty()?;
    let fd = cgroup.as_ref().map(super::cgroup::TaskCgroup::procs_fd);
    let mut std_command = guarded_command_in(cmd, clear_env, groups, fd);
    // SAFETY: one ioctl on the child's own stdin, async-signal-safe; runs
    // after the guarded command's hook, which made the child a session leader.
    unsafe {
        use std::os::unix::process::CommandExt;
        std_command.pre_exec(|| {
            if libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut command = tokio::process::Command::from(std_command);
    command.stdin(slave.try_clone()?).stdout(slave.try_clone()?).stderr(slave).kill_on_drop(false);
    let (child, pgid) = spawn_registered(command, groups)?;
    let input = std::fs::File::from(master.try_clone()?);
    nix::fcntl::fcntl(&master, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK))
        .map_err(std::io::Error::from)?;
    let output = pipe::Receiver::from_owned_fd_unchecked(master)?;
    Ok(TaskProcess { child, pgid, output, input: Some(input), cgroup })
}

/// Spawns `command` and registers its group. The command holds the
/// parent's copies of the child's output (a pipe's write end, or the pty);
/// dropping it leaves the child and what it starts as the only holders, so
/// the end of the output (EOF, or EIO for a pty) means they are gone.
fn spawn_registered(
    mut command: tokio::process::Command,
    groups: &Groups,
) -> std::io::Result<(tokio::process::Child, i32)> {
    let child = command.spawn()?;
    drop(command);
    let pgid = child
        .id()
        .map(|pid| pid as i32)
        .ok_or_else(|| std::io::Error::other("child exited before its pid was read"))?;
    groups.register(pgid);
    Ok((child, pgid))
}

/// A new pty pair, both ends close-on-exec from the moment they exist:
/// another task spawned on another thread meanwhile must not inherit
/// them, or the pty would stay open after this task ended (`openpty`
/// cannot say so, hence `posix_openpt`). The size is [`PTY_SIZE`].
fn open_pty() -> std::io::Result<(OwnedFd, std::fs::File)> {
    use nix::fcntl::OFlag;
    use std::os::unix::fs::OpenOptionsExt;
    let master = nix::pty::posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC)?;
    nix::pty::grantpt(&master)?;
    nix::pty::unlockpt(&master)?;
    let name = nix::pty::ptsname_r(&master)?;
    // std opens with O_CLOEXEC; O_NOCTTY keeps it from becoming vx's terminal.
    let slave = std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOCTTY).open(name)?;
    // SAFETY: TIOCSWINSZ reads one winsize from the pointer, which outlives the call.
    if unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&slave), libc::TIOCSWINSZ, &PTY_SIZE) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((OwnedFd::from(master), slave))
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn both_ends_of_a_task_pty_are_closed_on_exec_and_sized() {
        let (master, slave) = open_pty().unwrap();
        for fd in [master.as_fd(), slave.as_fd()] {
            let flags = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFD).unwrap();
            assert_ne!(flags & libc::FD_CLOEXEC, 0, "a pty end would leak into processes spawned meanwhile");
        }
        let mut size = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: TIOCGWINSZ writes one winsize to the pointer, which outlives the call.
        assert_eq!(unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&slave), libc::TIOCGWINSZ, &mut size) }, 0);
        assert_eq!((size.ws_row, size.ws_col), (PTY_SIZE.ws_row, PTY_SIZE.ws_col));
    }
}
