//! The local executor: how a task's command becomes a process here.
//!
//! cwd is the project directory; the environment is vx's plus `VX_PROJECT`,
//! `VX_TASK`, and `PATH` with the project's and the root's
//! `node_modules/.bin` first, as `npm run` does. A string command runs under
//! `sh -c`, except that a plain one (words of safe characters, no shell
//! syntax, not a shell builtin) is exec'd directly: the result is the same
//! and a shell start per task is saved.

use std::ffi::OsString;

use crate::config::{Command, Project, Task, Workspace};
use crate::guard::TaskCommand;

/// The process that runs `task` of `project`.
pub fn task_command(ws: &Workspace, project: &Project, task: &Task) -> TaskCommand {
    let argv: Vec<String> = match &task.command {
        Command::Argv(argv) => argv.clone(),
        Command::Shell(script) => simple_argv(script).unwrap_or_else(|| vec!["sh".into(), "-c".into(), script.clone()]),
    };
    let mut path = OsString::new();
    for dir in [project.dir.join("node_modules/.bin"), ws.root.join("node_modules/.bin")] {
        path.push(dir.as_os_str());
        path.push(":");
    }
    path.push(std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()));
    let mut argv = argv.into_iter().map(OsString::from);
    TaskCommand {
        program: argv.next().expect("commands are never empty"),
        args: argv.collect(),
        cwd: project.dir.clone(),
        env: vec![
            ("VX_PROJECT".into(), project.name.clone().into()),
            ("VX_TASK".into(), task.name.clone().into()),
            ("PATH".into(), path),
        ],
        confine: None,
        terminal: task.interactive,
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
