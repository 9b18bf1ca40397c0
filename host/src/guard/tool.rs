//! Short helper commands vx itself needs (git for `--affected`): run to
//! completion with captured output. They are not tasks, so they are not
//! put in a group of their own, but they still start here.

use std::path::Path;
use std::process::Stdio;

#[derive(Debug)]
pub(crate) struct ToolOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

pub(crate) fn run_tool(program: &str, args: &[&str], cwd: &Path) -> std::io::Result<ToolOutput> {
    #[expect(clippy::disallowed_methods, reason = "the guard is the one place that spawns processes")]
    let out = std::process::Command::new(program).args(args).current_dir(cwd).stdin(Stdio::null()).output()?;
    Ok(ToolOutput {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Runs `program ARGS` with `input` on its standard input; its standard
/// output as bytes, and whether it succeeded (standard error is dropped).
/// For helpers that take a request on stdin (`watchman -j`).
pub(crate) fn run_tool_with_input(
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
    input: &[u8],
) -> std::io::Result<(bool, Vec<u8>)> {
    use std::io::Write;
    #[expect(clippy::disallowed_methods, reason = "the guard is the one place that spawns processes")]
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let written = child.stdin.take().map(|mut stdin| stdin.write_all(input));
    let out = child.wait_with_output()?;
    Ok((matches!(written, Some(Ok(()))) && out.status.success(), out.stdout))
}
