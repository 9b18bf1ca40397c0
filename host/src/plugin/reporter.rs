//! The reporter behind `vx run --report NAME [--report-file PATH]`: the
//! built-in `markdown` or a reporter plugin of the workspace. It is opened
//! (pin checked, link checked) before the run so that a bad plugin fails
//! fast, and renders the run's summary after it. vx writes the file; the
//! plugin gets no grant for it.

use std::path::Path;
use std::time::SystemTime;

use super::{LoadedPlugin, RunReport, World, load_configured};
use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::events::RunSummary;
use crate::report::markdown;

/// A reporter, ready to render a run.
#[derive(Debug)]
pub enum Reporter {
    /// The built-in Markdown summary, unless a plugin is named `markdown`.
    Markdown,
    Plugin(Box<LoadedPlugin>),
}

impl Reporter {
    /// The reporter named `name` in the workspace: `markdown` or a
    /// `[plugins.NAME]` whose component is a reporter.
    pub fn open(ws: &Workspace, name: &str) -> Result<Reporter> {
        if name == "markdown" && !ws.plugins.contains_key(name) {
            return Ok(Reporter::Markdown);
        }
        let Some(settings) = ws.plugins.get(name) else {
            let mut known: Vec<&str> = ws.plugins.keys().map(String::as_str).collect();
            known.insert(0, "markdown");
            return Err(Error::usage(format!("--report: no reporter named `{name}`"))
                .with_hint(format!("the reporters are {}; add a plugin with `vx plugin add`", known.join(", "))));
        };
        let plugin = load_configured(&ws.root, name, settings)?;
        if plugin.world != World::Reporter {
            return Err(Error::usage(format!(
                "--report: plugin `{name}` is a {}, not a reporter",
                plugin.world.name()
            ))
            .with_hint("give --report a reporter plugin or `markdown`"));
        }
        Ok(Reporter::Plugin(Box::new(plugin)))
    }

    /// The report of a run, as the reporter renders it.
    pub fn render(&self, run: &RunReport<'_>) -> Result<Vec<u8>> {
        match self {
            Reporter::Markdown => Ok(markdown::render(run.summary, run.argv).into_bytes()),
            Reporter::Plugin(plugin) => Ok(plugin.render(run)?),
        }
    }

    /// Renders the run and writes it to `file`, or to stdout.
    pub fn write(
        &self,
        summary: &RunSummary,
        argv: &[String],
        started: SystemTime,
        tags: &[(String, String)],
        file: Option<&Path>,
    ) -> Result<()> {
        let started_unix_ms = started.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let bytes = self.render(&RunReport { argv, started_unix_ms, tags, summary })?;
        write_report(&bytes, file)
    }
}

/// Writes a rendered report to `file`, or to stdout.
pub fn write_report(bytes: &[u8], file: Option<&Path>) -> Result<()> {
    match file {
        Some(path) => std::fs::write(path, bytes).map_err(|e| Error::io(format_args!("write {}", path.display()), e)),
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| Error::io("write the report", e))
        }
    }
}
