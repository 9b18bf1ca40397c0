//! The reporter behind `vx run --report NAME [--report-file PATH]`: the
//! built-in `markdown` or `html`, a reporter plugin of the workspace, or a
//! first-party reporter (`junit`) that the workspace did not add. It is opened
//! (pin checked, link checked) before the run so that a bad plugin fails
//! fast, and renders the run's summary after it. vx writes the file; the
//! plugin gets no grant for it.

use std::path::Path;
use std::time::SystemTime;

use super::{LoadedPlugin, RunReport, World, first_party, load_configured};
use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::events::RunSummary;
use crate::report::{RunInfo, html, markdown, run_document};

/// A reporter, ready to render a run.
#[derive(Debug)]
pub(crate) enum Reporter {
    /// The built-in Markdown summary, unless a plugin is named `markdown`.
    Markdown,
    /// The built-in self-contained HTML page, unless a plugin is named `html`.
    Html,
    Plugin(Box<LoadedPlugin>),
}

impl Reporter {
    /// The reporter named `name` in the workspace: `markdown` or a
    /// `[plugins.NAME]` whose component is a reporter.
    pub(crate) fn open(ws: &Workspace, name: &str) -> Result<Reporter> {
        match name {
            "markdown" if !ws.plugins.contains_key(name) => return Ok(Reporter::Markdown),
            "html" if !ws.plugins.contains_key(name) => return Ok(Reporter::Html),
            _ => {}
        }
        let plugin = match (ws.plugins.get(name), first_party::by_name(name)) {
            (Some(settings), _) => load_configured(&ws.root, name, settings)?,
            // A first-party reporter needs no grant, so it works unadded.
            (None, Some(builtin)) if builtin.world == World::Reporter => builtin.load()?,
            (None, _) => {
                let builtins = first_party::ALL.iter().filter(|p| p.world == World::Reporter).map(|p| p.name);
                let mut known: Vec<&str> = ["markdown", "html"].into_iter().chain(builtins).collect();
                for plugin in ws.plugins.keys() {
                    if !known.contains(&plugin.as_str()) {
                        known.push(plugin);
                    }
                }
                return Err(Error::usage(format!("--report: no reporter named `{name}`"))
                    .with_hint(format!("the reporters are {}; add a plugin with `vx plugin add`", known.join(", "))));
            }
        };
        if plugin.world != World::Reporter {
            return Err(Error::usage(format!(
                "--report: plugin `{name}` is a {}, not a reporter",
                plugin.world.name()
            ))
            .with_hint("give --report a reporter plugin, `markdown` or `html`"));
        }
        Ok(Reporter::Plugin(Box::new(plugin)))
    }

    /// The report of a run, as the reporter renders it.
    pub(crate) fn render(&self, run: &RunReport<'_>, document: &serde_json::Value) -> Result<Vec<u8>> {
        match self {
            Reporter::Markdown => Ok(markdown::render(run.summary, run.argv).into_bytes()),
            Reporter::Html => Ok(html::render(document).into_bytes()),
            Reporter::Plugin(plugin) => Ok(plugin.render(run)?),
        }
    }

    /// Renders the run and writes it to `file`, or to stdout. `invocation`
    /// is its id in history; `exit_code` the run's.
    pub(crate) fn write(
        &self,
        summary: &RunSummary,
        info: &RunInfo,
        invocation: Option<i64>,
        exit_code: u8,
        file: Option<&Path>,
    ) -> Result<()> {
        let started_unix_ms = info.started.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let run = RunReport { argv: &info.args, started_unix_ms, tags: &info.tags, summary };
        let document = match self {
            Reporter::Html => run_document(info, invocation, summary, exit_code),
            Reporter::Markdown | Reporter::Plugin(_) => serde_json::Value::Null,
        };
        let bytes = self.render(&run, &document)?;
        write_report(&bytes, file)
    }
}

/// Writes a rendered report to `file`, or to stdout.
pub(crate) fn write_report(bytes: &[u8], file: Option<&Path>) -> Result<()> {
    match file {
        Some(path) => std::fs::write(path, bytes).map_err(|e| Error::io(format_args!("write {}", path.display()), e)),
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| Error::io("write the report", e))
        }
    }
}
