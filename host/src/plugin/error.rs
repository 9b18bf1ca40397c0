//! What goes wrong in a plugin, as the user reads it: always naming the
//! plugin and the call, and for a limit, the `vx.toml` key that raises it.

use std::fmt;

use super::bindings::WitError;
use super::text::{MAX_MESSAGE, one_line};

/// A failed plugin call or load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    pub plugin: String,
    /// The export called (`render`, `exists`, …) or `load`.
    pub call: String,
    pub kind: PluginErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginErrorKind {
    /// The plugin returned its own `error` value.
    Returned,
    /// It trapped (a panic, an invalid operation, a bad return value).
    Trapped,
    /// It used up its CPU budget or its wall-clock call timeout.
    OutOfTime,
    /// It asked for more memory than its limit.
    OutOfMemory,
    /// It could not be loaded (file, pin, component, link).
    Load,
}

impl PluginError {
    pub fn new(plugin: &str, call: &str, kind: PluginErrorKind, message: impl Into<String>) -> PluginError {
        PluginError { plugin: plugin.to_string(), call: call.to_string(), kind, message: message.into() }
    }

    pub fn load(plugin: &str, message: impl Into<String>) -> PluginError {
        PluginError::new(plugin, "load", PluginErrorKind::Load, message)
    }

    /// The plugin's own error value, turned into a message of one line
    /// (found by fuzzing: a reply of `denied: \r` printed over two lines).
    pub fn returned(plugin: &str, call: &str, err: WitError) -> PluginError {
        let line = |m: &str| one_line(m, MAX_MESSAGE);
        let text = match err {
            WitError::InvalidConfig(m) => format!("invalid config: {}", line(&m)),
            WitError::Denied(m) => format!("denied: {}", line(&m)),
            WitError::Unavailable(m) => format!("unavailable: {}", line(&m)),
            WitError::Failed(m) => line(&m),
        };
        PluginError::new(plugin, call, PluginErrorKind::Returned, text)
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == PluginErrorKind::Load {
            write!(f, "plugin `{}`: {}", self.plugin, self.message)
        } else {
            write!(f, "plugin `{}` failed in `{}`: {}", self.plugin, self.call, self.message)
        }
    }
}

impl std::error::Error for PluginError {}

impl From<PluginError> for crate::Error {
    fn from(e: PluginError) -> crate::Error {
        let hint = match e.kind {
            PluginErrorKind::OutOfTime | PluginErrorKind::OutOfMemory => {
                format!("raise the limit in `[plugins.{}].limits` in vx.toml if the plugin needs it", e.plugin)
            }
            PluginErrorKind::Load => format!("check `[plugins.{}]` in vx.toml and `vx plugin list`", e.plugin),
            _ => format!("this is the plugin's own failure; see `vx plugin list` for `{}`", e.plugin),
        };
        let kind = if e.kind == PluginErrorKind::Load { crate::ErrorKind::Config } else { crate::ErrorKind::Internal };
        crate::Error::new(kind, e.to_string()).with_hint(hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reply fuzzing found (tests/fuzz/regressions/plugin_reply), and
    /// its relatives: whatever a plugin says, vx's error is one line.
    #[test]
    fn a_plugins_error_text_becomes_one_line() {
        for (text, want) in [
            ("\r", "plugin `p` failed in `get`: denied: \\r"),
            (
                "line one\nline two\r\n\x1b[31mred",
                "plugin `p` failed in `get`: denied: line one\\nline two\\r\\n\\u{1b}[31mred",
            ),
        ] {
            let e = crate::Error::from(PluginError::returned("p", "get", WitError::Denied(text.to_string())));
            let shown = e.to_string();
            assert!(shown.starts_with(want), "{shown:?}");
            assert!(!shown.contains(['\n', '\r']), "{shown:?}");
        }
        let long = PluginError::returned("p", "get", WitError::Failed("x".repeat(10_000)));
        assert!(long.message.chars().count() <= super::super::text::MAX_MESSAGE + 1, "cut, with an ellipsis");
    }
}
