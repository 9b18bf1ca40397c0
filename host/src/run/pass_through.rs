//! Arguments after `--` (`vx run test -- --coverage`): appended to the
//! command of every task named on the command line, and only those, as
//! Turborepo does. A name (`test`) means that task in every project; an
//! id (`web#test`) one task. The dependencies a named task pulls in run
//! as configured, and so does a named group (it has no command). The
//! arguments become part of the command, so they are in the named tasks'
//! keys, in `--dry`, and in what history records.

use crate::config::{Command, Workspace};
use crate::graph::TaskId;

use crate::units::shell_quote;

/// Appends `args` to the commands of the tasks `specs` name.
pub fn apply_pass_through(ws: &mut Workspace, specs: &[String], args: &[String]) {
    if args.is_empty() {
        return;
    }
    for spec in specs {
        let exact = TaskId::parse(spec);
        for project in &mut ws.projects {
            let name = match &exact {
                Some(id) if id.project == project.name => id.task.as_str(),
                Some(_) => continue,
                None => spec.as_str(),
            };
            // A group has no command of its own to take them.
            if let Some(task) = project.tasks.get_mut(name).filter(|t| !t.is_group()) {
                append(&mut task.command, args);
            }
        }
    }
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
