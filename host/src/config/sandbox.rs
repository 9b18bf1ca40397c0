//! `sandbox` on a task: `true`, or a table of what it may touch beyond its
//! declarations (docs/sandbox.md):
//!
//! ```toml
//! sandbox = { allow-read = ["/node_modules", "~/.cache/ms-playwright"], allow-write = ["/tmp"], network = false }
//! ```

use toml::Spanned;

use super::diag::Source;
use super::error::Diagnostic;
use super::model::{Network, Sandbox};

const KEYS: &[&str] = &["allow-read", "allow-write", "network"];

/// The task's `sandbox` value, checked; `None` when it has none or `false`.
pub(crate) fn task_sandbox(
    value: &Option<Spanned<toml::Value>>,
    source: &Source,
) -> Result<Option<Sandbox>, Diagnostic> {
    let Some(value) = value else { return Ok(None) };
    let span = Some(value.span());
    let hint = "write `sandbox = true`, or a table: `sandbox = { allow-read = [\"/node_modules\"], network = false }`";
    match value.get_ref() {
        toml::Value::Boolean(false) => Ok(None),
        toml::Value::Boolean(true) => Ok(Some(Sandbox::default())),
        toml::Value::Table(table) => {
            let mut sandbox = Sandbox::default();
            for (key, v) in table {
                match (key.as_str(), v) {
                    ("allow-read", v) => sandbox.allow_read = paths(v, key, source, span.clone())?,
                    ("allow-write", v) => sandbox.allow_write = paths(v, key, source, span.clone())?,
                    ("network", toml::Value::Boolean(b)) => {
                        sandbox.network = if *b { Network::Host } else { Network::None };
                    }
                    ("network", toml::Value::String(s)) if s == "loopback" => sandbox.network = Network::Loopback,
                    ("network", _) => {
                        return Err(source.error(span, "`sandbox.network` must be true, false or \"loopback\"").with_hint(
                            "`network = true` lets the task reach the network; `\"loopback\"` gives it a loopback of its own",
                        ));
                    }
                    _ => {
                        return Err(source
                            .error(span, format!("unknown key `{key}` in `sandbox`; valid keys: {}", KEYS.join(", ")))
                            .with_hint(hint));
                    }
                }
            }
            Ok(Some(sandbox))
        }
        _ => Err(source.error(span, "`sandbox` must be true, false or a table").with_hint(hint)),
    }
}

fn paths(
    v: &toml::Value,
    key: &str,
    source: &Source,
    span: Option<std::ops::Range<usize>>,
) -> Result<Vec<String>, Diagnostic> {
    let wrong = || {
        source.error(span.clone(), format!("`sandbox.{key}` must be a list of paths")).with_hint(
            "write paths as `\"/node_modules\"` (workspace root), `\"~/.cache/x\"` (home), `\"gen\"` (project) or an absolute path",
        )
    };
    let toml::Value::Array(items) = v else { return Err(wrong()) };
    items.iter().map(|i| i.as_str().filter(|s| !s.is_empty()).map(str::to_string).ok_or_else(wrong)).collect()
}
