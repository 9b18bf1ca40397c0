//! The local executor: how a task's command becomes a process here.
//!
//! cwd is the project directory; the environment is vx's plus `VX_PROJECT`,
//! `VX_TASK`, `PATH` with every `node_modules/.bin` from the project up to
//! the root first, and, for a project with a `package.json`, the
//! variables a package manager gives its scripts (`npm_package_name`,
//! `npm_lifecycle_event`, `INIT_CWD`, …), as `npm run` does. A string command runs under
//! `sh -c`, except that a plain one (words of safe characters, no shell
//! syntax, not a shell builtin) is exec'd directly: the result is the same
//! and a shell start per task is saved.

use std::ffi::OsString;

use crate::config::{Command, Project, Task, Workspace};
use crate::guard::TaskCommand;

/// The process that runs `task` of `project`.
pub(crate) fn task_command(ws: &Workspace, project: &Project, task: &Task) -> TaskCommand {
    let argv: Vec<String> = match &task.command {
        Command::Argv(argv) => argv.clone(),
        Command::Shell(script) => simple_argv(script).unwrap_or_else(|| vec!["sh".into(), "-c".into(), script.clone()]),
    };
    // Every `node_modules/.bin` from the project up to the root, nearest
    // first, as `npm run` and pnpm put them.
    let mut path = OsString::new();
    for dir in project.dir.ancestors().take_while(|d| d.starts_with(&ws.root)) {
        path.push(dir.join("node_modules/.bin").as_os_str());
        path.push(":");
    }
    path.push(std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()));
    let mut argv = argv.into_iter().map(OsString::from);
    let mut env: Vec<(OsString, OsString)> = vec![
        ("VX_PROJECT".into(), project.name.clone().into()),
        ("VX_TASK".into(), task.name.clone().into()),
        ("PATH".into(), path),
    ];
    env.extend(package_manager_env(ws, project, task));
    TaskCommand {
        program: argv.next().expect("commands are never empty"),
        args: argv.collect(),
        cwd: project.dir.clone(),
        env,
        confine: None,
        terminal: task.interactive,
    }
}

/// What npm, pnpm, yarn and bun give every script of a package, so that
/// release and version scripts read the same values under vx: the
/// package's `name` and `version`, the script's name, the directory the
/// run was started from, and the manager in `npm_config_user_agent` (the
/// root's `packageManager`, else npm). Only for a project with a
/// `package.json`; `npm_package_*` only for the fields it has.
fn package_manager_env(ws: &Workspace, project: &Project, task: &Task) -> Vec<(OsString, OsString)> {
    let Some((name, version)) = &project.package else { return Vec::new() };
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if let Some(name) = name {
        env.push(("npm_package_name".into(), name.into()));
    }
    if let Some(version) = version {
        env.push(("npm_package_version".into(), version.into()));
    }
    env.push(("npm_lifecycle_event".into(), task.name.clone().into()));
    if let Command::Shell(script) = &task.command {
        env.push(("npm_lifecycle_script".into(), script.into()));
    }
    let manager = ws.package_manager.as_deref().unwrap_or("npm").replacen('@', "/", 1);
    let agent = format!("{manager} vx/{} {} {}", env!("CARGO_PKG_VERSION"), node_platform(), node_arch());
    env.push(("npm_config_user_agent".into(), agent.into()));
    let init_cwd = std::env::current_dir().unwrap_or_else(|_| ws.root.clone());
    env.push(("INIT_CWD".into(), init_cwd.into()));
    env
}

/// `process.platform` as Node names this system.
fn node_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        os => os,
    }
}

/// `process.arch` as Node names this machine.
fn node_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        arch => arch,
    }
}

/// Words the shell would pass through unchanged.
fn simple_argv(script: &str) -> Option<Vec<String>> {
    const SAFE: &str = "_-./:,+=@%";
    let words: Vec<&str> = script.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let first = *words.first()?;
    let plain = |w: &str| w.chars().all(|c| c.is_ascii_alphanumeric() || SAFE.contains(c));
    if !words.iter().all(|w| plain(w)) || first.contains('=') || is_shell_word(first) {
        return None;
    }
    Some(words.into_iter().map(str::to_string).collect())
}

/// Builtins and keywords that have no program of their own (or behave
/// differently as one).
fn is_shell_word(word: &str) -> bool {
    matches!(
        word,
        "." | ":"
            | "alias"
            | "bg"
            | "break"
            | "cd"
            | "command"
            | "continue"
            | "eval"
            | "exec"
            | "exit"
            | "export"
            | "fg"
            | "getopts"
            | "hash"
            | "jobs"
            | "read"
            | "readonly"
            | "return"
            | "set"
            | "shift"
            | "source"
            | "times"
            | "trap"
            | "type"
            | "ulimit"
            | "umask"
            | "unalias"
            | "unset"
            | "wait"
            | "if"
            | "for"
            | "while"
            | "until"
            | "case"
            | "function"
            | "select"
            | "time"
            | "!"
            | "{"
            | "[["
            | "local"
    )
}

#[cfg(test)]
mod tests {
    use super::simple_argv;

    #[test]
    fn plain_commands_skip_the_shell() {
        assert_eq!(simple_argv("node build.js"), Some(vec!["node".into(), "build.js".into()]));
        assert_eq!(simple_argv("tsc -b --verbose"), Some(vec!["tsc".into(), "-b".into(), "--verbose".into()]));
    }

    #[test]
    fn shell_syntax_keeps_the_shell() {
        for script in
            ["echo $HOME", "a && b", "echo 'x y'", "FOO=1 node x", "cd src", "ls *.js", "exit 3", "a | b", "echo ~"]
        {
            assert_eq!(simple_argv(script), None, "{script}");
        }
    }
}
