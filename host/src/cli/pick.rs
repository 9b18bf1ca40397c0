//! The task picker of a bare `vx run`: on a terminal, a fuzzy list of
//! `project#task` for the selected projects (`--filter`, `--affected`, the
//! project the user stands in), each with its `description`; without one,
//! the candidates' ids on stdout (one per line, for scripts) and a usage
//! error. Selection errors (no git for `--affected`, a bad filter)
//! come first, before any picker opens.

use std::io::IsTerminal;

use crate::config::Workspace;
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Selection, select_projects};

/// The `project#task` the user picked.
pub(crate) fn pick_task(ws: &Workspace, sel: &Selection) -> Result<String> {
    let projects = select_projects(ws, sel)?;
    let described: Vec<(String, Option<&str>)> = projects
        .iter()
        .flat_map(|&p| {
            let project = &ws.projects[p];
            project.tasks.iter().map(|(t, task)| (format!("{}#{t}", project.name), task.description.as_deref()))
        })
        .collect();
    let candidates: Vec<String> = described.iter().map(|(id, _)| id.clone()).collect();
    if candidates.is_empty() {
        return Err(Error::usage("no task to run in the selected projects")
            .with_hint("run `vx show` to list projects and tasks, or widen the selection"));
    }
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !terminal {
        println!("{}", candidates.join("\n"));
        return Err(Error::usage("no task named (the candidates are listed on stdout)")
            .with_hint("run one with `vx run PROJECT#TASK`, or run `vx run` on a terminal to pick one"));
    }
    let term = dialoguer::console::Term::stderr();
    let picked = dialoguer::FuzzySelect::new()
        .with_prompt("task to run (type to filter, Enter to run, Esc to cancel)")
        .items(lines(&described))
        .default(0)
        .interact_on_opt(&term);
    let _ = term.show_cursor();
    match picked {
        Ok(Some(i)) => Ok(candidates[i].clone()),
        Ok(None) => Err(cancelled()),
        Err(dialoguer::Error::IO(e)) if e.kind() == std::io::ErrorKind::Interrupted => Err(cancelled()),
        Err(e) => {
            Err(Error::internal(format!("the task picker failed: {e}"))
                .with_hint("name the task: `vx run PROJECT#TASK`"))
        }
    }
}

/// Each candidate as the picker lists it: its id, and its description in
/// a column after the longest id, so typing part of a description finds
/// the task too.
fn lines(described: &[(String, Option<&str>)]) -> Vec<String> {
    let width = described.iter().map(|(id, _)| id.chars().count()).max().unwrap_or(0);
    described
        .iter()
        .map(|(id, description)| match description {
            Some(d) => format!("{id:<width$}  {d}"),
            None => id.clone(),
        })
        .collect()
}

fn cancelled() -> Error {
    Error::new(ErrorKind::Interrupted, "no task picked; nothing ran")
}

/// `argv` with `task` inserted after the `run` subcommand, so history
/// records a line that runs the task instead of opening the picker again.
pub(crate) fn with_task(argv: &[String], task: &str) -> Vec<String> {
    let mut out = argv.to_vec();
    let at = argv.iter().position(|a| a == "run").map_or(out.len(), |i| i + 1);
    out.insert(at, task.to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_line_up_after_the_longest_id() {
        let described = [("web#build".to_string(), Some("Bundle the site")), ("api#lint".to_string(), None)];
        assert_eq!(lines(&described), ["web#build  Bundle the site", "api#lint"]);
    }

    #[test]
    fn the_picked_task_follows_run() {
        let argv: Vec<String> = ["-C", "x", "run", "--filter", "web"].iter().map(|s| s.to_string()).collect();
        assert_eq!(with_task(&argv, "web#build"), ["-C", "x", "run", "web#build", "--filter", "web"]);
    }
}
