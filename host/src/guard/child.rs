//! vx as a child of vx: `vx mcp` answers with the JSON of `vx why`,
//! `vx history`, `vx run --dry=json` and runs `vx run` itself, each one
//! this same binary in a process of its own.
//!
//! A child must never outlive the vx that started it. It is told to die
//! with its parent (`VX_PARENT_DEATH`, the npm launcher's mechanism in
//! [`super::parent`]), so even a `kill -9` of the parent makes the child
//! stop its tasks with its kill ladder and exit. A child whose handle is
//! dropped before it ended (the request was cancelled, the server is
//! stopping) gets SIGTERM at once, and its own guard does the rest.

use std::path::Path;
use std::process::Stdio;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdout};

use super::parent::PARENT_DEATH_VAR;
use super::tool::ToolOutput;

/// A running `vx` child; SIGTERM when dropped before it was waited for.
#[derive(Debug)]
pub(crate) struct VxChild {
    child: Child,
    done: bool,
}

impl VxChild {
    /// Starts `vx -C ROOT ARGS` (this binary) with piped output and no
    /// input.
    pub(crate) fn spawn(root: &Path, args: &[String]) -> std::io::Result<VxChild> {
        let exe = std::env::current_exe()?;
        #[expect(clippy::disallowed_methods, reason = "the guard is the one place that spawns processes")]
        let child = tokio::process::Command::new(exe)
            .arg("-C")
            .arg(root)
            .args(args)
            .current_dir(root)
            .env(PARENT_DEATH_VAR, std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        Ok(VxChild { child, done: false })
    }

    /// The child's standard output, to read as it comes (once).
    pub(crate) fn stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The child's standard error, to read as it comes (once).
    pub(crate) fn stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Waits for the child's end; its exit code (128 + N for signal N).
    pub(crate) async fn wait(&mut self) -> std::io::Result<i32> {
        let status = self.child.wait().await?;
        self.done = true;
        use std::os::unix::process::ExitStatusExt;
        Ok(status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1))
    }

    /// Runs to the end, collecting both outputs whole: for the short JSON
    /// answers of `vx why`, `vx history` and `--dry=json`.
    pub(crate) async fn output(root: &Path, args: &[String]) -> std::io::Result<ToolOutput> {
        let mut child = VxChild::spawn(root, args)?;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let (stdout, stderr) = (child.stdout(), child.stderr());
        let read_out = async {
            if let Some(mut s) = stdout {
                tokio::io::AsyncReadExt::read_to_end(&mut s, &mut out).await?;
            }
            Ok::<_, std::io::Error>(())
        };
        let read_err = async {
            if let Some(mut s) = stderr {
                tokio::io::AsyncReadExt::read_to_end(&mut s, &mut err).await?;
            }
            Ok::<_, std::io::Error>(())
        };
        let (r1, r2) = tokio::join!(read_out, read_err);
        r1?;
        r2?;
        let code = child.wait().await?;
        Ok(ToolOutput {
            success: code == 0,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        })
    }
}

impl Drop for VxChild {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // The child stops its tasks with its own kill ladder on SIGTERM; it
        // is reaped by tokio's orphan queue.
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            #[expect(clippy::disallowed_methods, reason = "the guard is the one place that signals processes")]
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
    }
}
