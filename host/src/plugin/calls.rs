//! The typed calls vx makes, each on a pooled instance (`pool`): `info` on
//! any plugin, `render` on reporters, `exists`/`get`/`put` on cache
//! backends, `execute` on executors. Every result a plugin
//! returns is checked before vx uses it.

use std::sync::Arc;

use wasmtime::component::Resource;

use super::bindings::PluginInfo;
use super::bindings::executor::exports::vx::plugin::exec;
use super::bindings::reporter::exports::vx::plugin::report;
use super::error::{PluginError, PluginErrorKind};
use super::load::LoadedPlugin;
use super::pool::Bound;
use super::process::ExecContext;
use super::state::{BlobReader, BlobWriter, OutputSink, SinkFn, mib};
use crate::error::one_line;
use crate::events::{CacheOutcome, RunSummary, TaskStatus};

/// What a plugin says about itself, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    pub name: String,
    pub version: String,
    pub min_vx_version: Option<String>,
    pub config_schema: Option<String>,
    pub requests: Vec<String>,
}

impl LoadedPlugin {
    /// Calls the plugin's `info` and checks the answer.
    pub fn info(&self) -> Result<Info, PluginError> {
        let raw: PluginInfo = self.pooled_call("info", |bound, store| match bound {
            Bound::Reporter(r) => r.vx_plugin_report().call_info(store),
            Bound::CacheBackend(c) => c.vx_plugin_cache().call_info(store),
            Bound::Executor(e) => e.vx_plugin_exec().call_info(store),
            Bound::Subscriber(s) => s.vx_plugin_subscribe().call_info(store),
            Bound::Command(c) => c.vx_plugin_verb().call_info(store),
        })?;
        check_info(self.name(), raw)
    }

    /// Renders a finished run through a reporter plugin.
    pub fn render(&self, run: &RunReport<'_>) -> Result<Vec<u8>, PluginError> {
        let wit = run.to_wit();
        let out =
            self.pooled_call("render", |bound, store| bound.reporter()?.vx_plugin_report().call_render(store, &wit))?;
        let bytes = out.map_err(|e| PluginError::returned(self.name(), "render", e))?;
        let limit = self.limits().output;
        if bytes.len() as u64 > limit {
            return Err(PluginError::new(
                self.name(),
                "render",
                PluginErrorKind::OutOfMemory,
                format!(
                    "its report is {} MiB, more than its output limit of {}; raise `[plugins.{}].limits.output` in vx.toml if it needs more",
                    bytes.len() >> 20,
                    mib(limit),
                    self.name()
                ),
            ));
        }
        Ok(bytes)
    }

    /// Which of `keys` the remote has, one answer per key.
    pub fn cache_exists(&self, keys: &[String]) -> Result<Vec<bool>, PluginError> {
        let answer = self.pooled_call("exists", |backend, store| {
            backend.cache_backend()?.vx_plugin_cache().call_exists(store, keys)
        })?;
        let found = answer.map_err(|e| PluginError::returned(self.name(), "exists", e))?;
        if found.len() != keys.len() {
            return Err(PluginError::new(
                self.name(),
                "exists",
                PluginErrorKind::Returned,
                format!("it answered {} times for {} keys", found.len(), keys.len()),
            ));
        }
        Ok(found)
    }

    /// Downloads the entry of `key`; `None` on a miss.
    pub fn cache_get(&self, key: &str) -> Result<Option<Vec<u8>>, PluginError> {
        let (hit, data) = self.pooled_call("get", |backend, store| {
            let sink: Resource<BlobWriter> = store.data_mut().table.push(BlobWriter { data: Vec::new() })?;
            let borrowed = Resource::new_borrow(sink.rep());
            let result = backend.cache_backend()?.vx_plugin_cache().call_get(&mut *store, key, borrowed);
            let writer = store.data_mut().table.delete(sink)?;
            Ok((result?, writer.data))
        })?;
        match hit.map_err(|e| PluginError::returned(self.name(), "get", e))? {
            true => Ok(Some(data)),
            false => Ok(None),
        }
    }

    /// Uploads `bytes` as the entry of `key`.
    pub fn cache_put(&self, key: &str, bytes: Arc<Vec<u8>>) -> Result<(), PluginError> {
        let size = bytes.len() as u64;
        let result = self.pooled_call("put", |backend, store| {
            let source: Resource<BlobReader> = store.data_mut().table.push(BlobReader { data: bytes, pos: 0 })?;
            let borrowed = Resource::new_borrow(source.rep());
            let result = backend.cache_backend()?.vx_plugin_cache().call_put(&mut *store, key, size, borrowed);
            store.data_mut().table.delete(source)?;
            result
        })?;
        result.map_err(|e| PluginError::returned(self.name(), "put", e))
    }
}

/// One task for an executor plugin.
#[derive(Debug, Clone)]
pub struct ExecTask {
    pub id: String,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Workspace-relative.
    pub cwd: String,
    pub timeout_ms: Option<u64>,
    pub options: String,
}

/// What an executor reports back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecOutcome {
    pub exit_code: i32,
    pub duration_ms: u64,
}

impl LoadedPlugin {
    /// Runs a task through an executor plugin, its output into `sink`. The
    /// call has no wall-clock limit of its own (the task's timeout is vx's,
    /// through `ctx.control`); its CPU budget and memory limit hold.
    pub fn execute(&self, task: &ExecTask, ctx: ExecContext, sink: SinkFn) -> Result<ExecOutcome, PluginError> {
        let wit = exec::Task {
            id: task.id.clone(),
            argv: task.argv.clone(),
            env: task.env.clone(),
            cwd: task.cwd.clone(),
            timeout_ms: task.timeout_ms,
            options: task.options.clone(),
        };
        let out = self.pooled_call("execute", move |bound, store| {
            let data = store.data_mut();
            data.exec = Some(ctx);
            data.wall_limit = None;
            let executor = bound.executor()?;
            let sink: Resource<OutputSink> = store.data_mut().table.push(OutputSink { write: sink })?;
            let borrowed = Resource::new_borrow(sink.rep());
            let result = executor.vx_plugin_exec().call_execute(&mut *store, &wit, borrowed);
            let data = store.data_mut();
            data.table.delete(sink)?;
            // A pooled store outlives the call: let go of the task's context
            // (its runtime handle, its groups) now, not at the next call.
            data.exec = None;
            result
        })?;
        let outcome = out.map_err(|e| PluginError::returned(self.name(), "execute", e))?;
        // The exit code decides the task's status and is kept in history and
        // the cache: one no process can exit with is the plugin's bug, not
        // the task's result.
        if !(0..=255).contains(&outcome.exit_code) {
            return Err(PluginError::new(
                self.name(),
                "execute",
                PluginErrorKind::Returned,
                format!("it returned exit code {}, which no process exits with (0 to 255)", outcome.exit_code),
            ));
        }
        Ok(ExecOutcome { exit_code: outcome.exit_code, duration_ms: outcome.duration_ms })
    }
}

/// Checks what a plugin's `info` returned: a plain name, a `MAJOR.MINOR.PATCH`
/// version, a `min-vx-version` this vx meets, well-formed requests.
pub(crate) fn check_info(plugin: &str, raw: PluginInfo) -> Result<Info, PluginError> {
    let bad = |m: String| PluginError::new(plugin, "info", PluginErrorKind::Returned, m);
    let plain = |s: &str| !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_graphic());
    if !plain(&raw.name) {
        return Err(bad(format!("it returned an invalid name {:?}", cut(&raw.name))));
    }
    if parse_version(&raw.version).is_none() {
        return Err(bad(format!("it returned an invalid version {:?}; expected MAJOR.MINOR.PATCH", cut(&raw.version))));
    }
    if let Some(min) = &raw.min_vx_version {
        let Some(min_v) = parse_version(min) else {
            return Err(bad(format!("it returned an invalid min-vx-version {:?}", cut(min))));
        };
        let ours = parse_version(env!("CARGO_PKG_VERSION")).unwrap_or_default();
        if min_v > ours {
            return Err(PluginError::load(
                plugin,
                format!("it needs vx ≥ {}, and this is vx {}", one_line(min), env!("CARGO_PKG_VERSION")),
            ));
        }
    }
    if raw.requests.len() > 100
        || raw.requests.iter().any(|r| !r.contains('=') || r.len() > 500 || r.contains(char::is_control))
    {
        return Err(bad("it returned malformed requests; each is KEY=VALUE, like env=TOKEN".to_string()));
    }
    Ok(Info {
        name: raw.name,
        version: raw.version,
        min_vx_version: raw.min_vx_version,
        config_schema: raw.config_schema,
        requests: raw.requests,
    })
}

fn cut(text: &str) -> String {
    text.chars().take(40).collect()
}

/// `1.2.3` (a pre-release or build suffix is ignored).
pub(crate) fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let v = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(v)
}

/// What a reporter gets about a run.
#[derive(Debug)]
pub struct RunReport<'a> {
    pub argv: &'a [String],
    pub started_unix_ms: u64,
    pub tags: &'a [(String, String)],
    pub summary: &'a RunSummary,
}

impl RunReport<'_> {
    fn to_wit(&self) -> report::Run {
        let tasks = self
            .summary
            .results
            .iter()
            .map(|r| {
                let (project, task) = r.id.rsplit_once('#').unwrap_or(("", &r.id));
                let (status, message) = match &r.status {
                    // A flaky task passed: `ok`, with a message (which an
                    // `ok` task otherwise never has) that says so.
                    TaskStatus::Succeeded if r.is_flaky() => {
                        (report::Status::Ok, Some(format!("flaky: {}", crate::report::flaky_text(r))))
                    }
                    TaskStatus::Succeeded => (report::Status::Ok, None),
                    TaskStatus::Failed(why) => (report::Status::Failed, Some(why.clone())),
                    TaskStatus::TimedOut(d) => (
                        report::Status::TimedOut,
                        Some(format!("timed out after {}", crate::units::format_duration(*d))),
                    ),
                    TaskStatus::Cancelled => (report::Status::Cancelled, Some("interrupted".to_string())),
                    TaskStatus::Skipped(why) => (report::Status::Skipped, Some(why.clone())),
                };
                report::TaskResult {
                    project: project.to_string(),
                    task: task.to_string(),
                    status,
                    cache: match r.cache {
                        CacheOutcome::Local => report::Tier::Local,
                        CacheOutcome::Remote => report::Tier::Remote,
                        CacheOutcome::Uncached | CacheOutcome::Miss | CacheOutcome::Group => report::Tier::None,
                    },
                    duration_ms: r.duration.as_millis() as u64,
                    exit_code: r.exit_code,
                    message,
                    log_tail: r.log_tail.clone(),
                }
            })
            .collect();
        report::Run {
            argv: self.argv.to_vec(),
            vx_version: env!("CARGO_PKG_VERSION").to_string(),
            started_unix_ms: self.started_unix_ms,
            duration_ms: self.summary.wall.as_millis() as u64,
            tags: self.tags.to_vec(),
            tasks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn versions() {
        assert_eq!(parse_version("1.2.3"), Some((1, 2, 3)));
        assert_eq!(parse_version("0.1.0-beta.1"), Some((0, 1, 0)));
        assert_eq!(parse_version("1.2"), None);
        assert_eq!(parse_version("x"), None);
    }
}
