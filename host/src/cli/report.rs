//! `vx run --report NAME [--report-file PATH]`: the built-in `markdown`
//! reporter or a reporter plugin, opened (pin checked, link checked) before
//! the run so a bad plugin fails fast, and rendered after it. vx writes the
//! file; the plugin gets no grant for it.

use std::path::Path;
use std::time::SystemTime;

use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::events::RunSummary;
use crate::plugin::{LoadedPlugin, RunReport, World, load_configured};
use crate::report::markdown;

#[derive(Debug)]
pub enum Reporter {
    Markdown,
    Plugin(Box<LoadedPlugin>),
}

impl Reporter {
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

    /// Renders the run and writes it to `file`, or stdout.
    pub fn write(
        &self,
        summary: &RunSummary,
        argv: &[String],
        started: SystemTime,
        tags: &[(String, String)],
        file: Option<&Path>,
    ) -> Result<()> {
        let bytes = match self {
            Reporter::Markdown => markdown::render(summary, argv).into_bytes(),
            Reporter::Plugin(plugin) => {
                let started_unix_ms =
                    started.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
                plugin.render(&RunReport { argv, started_unix_ms, tags, summary })?
            }
        };
        match file {
            Some(path) => {
                std::fs::write(path, &bytes).map_err(|e| Error::io(format_args!("write {}", path.display()), e))
            }
            None => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                out.write_all(&bytes).and_then(|()| out.flush()).map_err(|e| Error::io("write the report", e))
            }
        }
    }
}
