//! `vx show`: the workspace's projects, their dependencies and tasks, as
//! text for people or JSON for tools.

use std::path::Path;

use clap::Args;
use serde_json::json;

use super::choice::{Format, choice};
use crate::config::view::{project_json, project_names as names};
use crate::config::{Project, Workspace, load_workspace, nearest};
use crate::error::{Error, Result};
use crate::graph::{Filter, reverse_deps};
use crate::plan::{Selection, select_projects};

/// Show projects, their tasks and dependencies.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  vx show\n  vx show web\n  vx show --format json --filter './apps/*'")]
pub(crate) struct ShowArgs {
    /// One project to show in detail.
    #[arg(value_name = "PROJECT", add = clap_complete::ArgValueCompleter::new(super::completions::complete_projects))]
    pub project: Option<String>,

    /// `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = choice::<Format>())]
    pub format: Format,

    /// Select projects as `vx run --filter` does.
    #[arg(long, short = 'F', value_name = "FILTER")]
    pub filter: Vec<String>,

    /// Only projects changed against REV (default: the merge base with main), plus dependents.
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub affected: Option<String>,
}

pub(crate) fn cmd_show(args: ShowArgs, cwd: &Path) -> Result<u8> {
    let json = args.format == Format::Json;
    let filters = args.filter.iter().map(|f| Filter::parse(f)).collect::<Result<Vec<_>>>()?;
    let ws = load_workspace(cwd)?;
    let selected: Vec<usize> = match &args.project {
        Some(name) => {
            let Some(p) = ws.project_index(name) else {
                let hint = nearest(name, ws.projects.iter().map(|p| p.name.as_str()))
                    .map_or_else(|| "run `vx show` to list the projects".into(), |n| format!("did you mean `{n}`?"));
                return Err(Error::usage(format!("unknown project `{name}`")).with_hint(hint));
            };
            vec![p]
        }
        None => {
            let sel = Selection {
                filters,
                affected: args.affected.map(|a| if a.is_empty() { None } else { Some(a) }),
                all: true,
                cwd: cwd.to_path_buf(),
                ..Selection::default()
            };
            select_projects(&ws, &sel)?.into_iter().collect()
        }
    };
    let reverse = reverse_deps(&ws);
    if json {
        let projects: Vec<_> = selected.iter().map(|&p| project_json(&ws, &ws.projects[p], &reverse[p])).collect();
        let doc = json!({ "root": ws.root, "projects": projects });
        println!("{}", serde_json::to_string_pretty(&doc).expect("show serializes"));
    } else {
        for &p in &selected {
            print!("{}", project_text(&ws, &ws.projects[p], &reverse[p]));
        }
    }
    Ok(0)
}

fn project_text(ws: &Workspace, p: &Project, dependents: &[usize]) -> String {
    let list = |v: Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    let mut out = format!("{} ({})\n", p.name, p.rel_dir);
    out.push_str(&format!("  depends on: {}\n", list(names(ws, &p.deps))));
    out.push_str(&format!("  dependents: {}\n", list(names(ws, dependents))));
    if !p.tags.is_empty() {
        out.push_str(&format!("  tags:       {}\n", p.tags.join(", ")));
    }
    for t in p.tasks.values() {
        let deps: Vec<String> = t.depends_on.iter().map(ToString::to_string).collect();
        let deps = if deps.is_empty() { String::new() } else { format!("  (after {})", deps.join(", ")) };
        let command = if t.is_group() { "(group)".to_string() } else { t.command.to_string() };
        out.push_str(&format!("  {}: {command}{deps}\n", t.name));
        if let Some(description) = &t.description {
            out.push_str(&format!("    {description}\n"));
        }
    }
    out
}
