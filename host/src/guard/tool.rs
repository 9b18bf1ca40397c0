//! Short helper commands vx itself needs (git for `--affected`): run to
//! completion with captured output. They are not tasks, so they are not
//! put in a group of their own, but they still start here.

use std::path::Path;
use std::process::Stdio;

#[derive(Debug)]
pub struct ToolOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

pub fn run_tool(program: &str, args: &[&str], cwd: &Path) -> std::io::Result<ToolOutput> {
    #[expect(clippy::disallowed_methods, reason = "the guard is the one place that spawns processes")]
    let out = std::process::Command::new(program).args(args).current_dir(cwd).stdin(Stdio::null()).output()?;
    Ok(ToolOutput {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}
