//! Arguments after `--` (`vx run test -- --coverage`): appended to the
//! command of every task named on the command line, and only those, as
//! Turborepo does. A name (`test`) means that task in every project; an
//! id (`web#test`) one task. The dependencies a named task pulls in run
//! as configured. The arguments become part of the command, so they are
//! in the named tasks' keys, in `--dry`, and in what history records.
//!
//! A group has no command to take them, and passing them on to its
//! members would hand `--fix` to a `typecheck` that refuses it; Turborepo
//! never passes them past the named tasks either. So they are never
//! dropped in silence: a name that reaches only groups is refused
//! (`check_pass_through`), and a name that reaches groups beside tasks
//! with a command (a package without the script, which `vx init` makes a
//! group as turbo makes it a no-op) says which groups take none.

use crate::config::{Command, Task, Workspace};
use crate::error::{Error, Result};
use crate::graph::{TaskGraph, TaskId};

use crate::units::shell_quote;

/// Appends `args` to the commands of the tasks `specs` name.
pub(crate) fn apply_pass_through(ws: &mut Workspace, specs: &[String], args: &[String]) {
    if args.is_empty() {
        return;
    }
    for project in &mut ws.projects {
        for task in project.tasks.values_mut() {
            if !task.is_group() && specs.iter().any(|s| names(s, &project.name, &task.name)) {
                append(&mut task.command, args);
            }
        }
    }
}

/// `task`'s command with the arguments after `--` when `specs` name it,
/// as [`apply_pass_through`] would make it (for views of a workspace the
/// arguments were not applied to).
pub(crate) fn command_with(task: &Task, project: &str, specs: &[String], args: &[String]) -> Command {
    let mut command = task.command.clone();
    if !args.is_empty() && !task.is_group() && specs.iter().any(|s| names(s, project, &task.name)) {
        append(&mut command, args);
    }
    command
}

/// Whether the command-line task `spec` names `project`'s `task`.
fn names(spec: &str, project: &str, task: &str) -> bool {
    match TaskId::parse(spec) {
        Some(id) => id.project == project && id.task == task,
        None => spec == task,
    }
}

/// Refuses arguments after `--` for a named task that reaches only groups
/// in `graph`, and warns of the groups that take none beside tasks that
/// do (see the module docs).
pub(crate) fn check_pass_through(ws: &Workspace, graph: &TaskGraph, specs: &[String], args: &[String]) -> Result<()> {
    if args.is_empty() {
        return Ok(());
    }
    for spec in specs {
        let named: Vec<usize> = graph
            .roots
            .iter()
            .copied()
            .filter(|&r| names(spec, &ws.projects[graph.nodes[r].project].name, &graph.nodes[r].id.task))
            .collect();
        let is_group = |n: &usize| ws.projects[graph.nodes[*n].project].tasks[&graph.nodes[*n].id.task].is_group();
        let groups: Vec<String> =
            named.iter().filter(|n| is_group(n)).map(|&n| graph.nodes[n].id.to_string()).collect();
        if groups.is_empty() {
            continue;
        }
        let listed = some_of(&groups);
        if groups.len() == named.len() {
            return Err(Error::usage(format!(
                "`{spec}` names only groups ({listed}): a group runs no command, so the arguments after `--` would reach no task"
            ))
            .with_hint("name the tasks that take them (`vx run lint -- --fix`); a group's members run as configured"));
        }
        tracing::warn!(
            "the arguments after `--` go to the {} `{spec}` task(s) with a command; {listed} run(s) no command (a group) and take(s) none",
            named.len() - groups.len()
        );
    }
    Ok(())
}

/// The first five of `ids`, and how many more.
fn some_of(ids: &[String]) -> String {
    let mut text = ids.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > 5 {
        text.push_str(&format!(" and {} more", ids.len() - 5));
    }
    text
}

fn append(command: &mut Command, args: &[String]) {
    match command {
        // Quoted, so each argument reaches the program as one word
        // whatever it holds, as `pnpm run test -- ARGS` passes them.
        Command::Shell(line) => {
            for a in args {
                line.push(' ');
                line.push_str(&shell_quote(a));
            }
        }
        Command::Argv(argv) => argv.extend(args.iter().cloned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands_get_quoted_words_and_argv_commands_plain_ones() {
        let mut shell = Command::Shell("vitest run".into());
        append(&mut shell, &["--coverage".into(), "a b".into(), "it's".into()]);
        assert_eq!(shell, Command::Shell(r"vitest run --coverage 'a b' 'it'\''s'".into()));
        let mut argv = Command::Argv(vec!["jest".into()]);
        append(&mut argv, &["a b".into()]);
        assert_eq!(argv, Command::Argv(vec!["jest".into(), "a b".into()]));
    }
}
