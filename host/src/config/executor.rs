//! The executor a task names (`executor = "…"`), typed: the built-in
//! `local` and `remote`, or an executor plugin of the workspace. A name
//! that is none of these is a located config error when `vx.toml` loads,
//! with the nearest name suggested, not a failure at run time.

use std::collections::BTreeMap;
use std::fmt;

use super::diag::did_you_mean;
use super::model::PluginSettings;

/// A process here, in its own group under the guard (the default).
pub(crate) const LOCAL: &str = "local";
/// REAPI remote execution (`[remote]`).
pub(crate) const REMOTE: &str = "remote";

/// Where a task's command runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ExecutorName {
    #[default]
    Local,
    Remote,
    /// An executor plugin, by its `[plugins.NAME]`.
    Plugin(String),
}

impl ExecutorName {
    /// The executor `name` names, unchecked (a run's `--executor` is
    /// checked against the workspace before it is used).
    pub fn new(name: &str) -> ExecutorName {
        match name {
            LOCAL => ExecutorName::Local,
            REMOTE => ExecutorName::Remote,
            other => ExecutorName::Plugin(other.to_string()),
        }
    }

    /// The executor `name` names, when the workspace has it: a plugin
    /// must be one of `plugins`. Else the message's tail: `; did you mean
    /// …?` or nothing.
    pub fn checked(name: &str, plugins: &BTreeMap<String, PluginSettings>) -> Result<ExecutorName, Unknown> {
        match ExecutorName::new(name) {
            ExecutorName::Plugin(p) if !plugins.contains_key(&p) => {
                let known = [LOCAL, REMOTE].into_iter().chain(plugins.keys().map(String::as_str));
                Err(Unknown { suggestion: did_you_mean(name, known) })
            }
            ok => Ok(ok),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            ExecutorName::Local => LOCAL,
            ExecutorName::Remote => REMOTE,
            ExecutorName::Plugin(name) => name,
        }
    }

    pub fn is_local(&self) -> bool {
        *self == ExecutorName::Local
    }
}

impl fmt::Display for ExecutorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An executor name the workspace does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// `; did you mean `x`?`, or empty.
    pub suggestion: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_names_and_plugins_are_known_and_a_typo_gets_the_nearest() {
        let mut plugins = BTreeMap::new();
        let settings = PluginSettings {
            path: "box.wasm".into(),
            dirs: Vec::new(),
            env: Vec::new(),
            allow_hosts: Vec::new(),
            allow_programs: Vec::new(),
            allow_clocks: false,
            limits: toml::Table::new(),
            config: toml::Table::new(),
        };
        plugins.insert("box".to_string(), settings);
        assert_eq!(ExecutorName::checked("local", &plugins), Ok(ExecutorName::Local));
        assert_eq!(ExecutorName::checked("remote", &plugins), Ok(ExecutorName::Remote));
        assert_eq!(ExecutorName::checked("box", &plugins), Ok(ExecutorName::Plugin("box".into())));
        let typo = ExecutorName::checked("locl", &plugins).unwrap_err();
        assert_eq!(typo.suggestion, "; did you mean `local`?");
        assert_eq!(ExecutorName::checked("bx", &plugins).unwrap_err().suggestion, "; did you mean `box`?");
        assert_eq!(ExecutorName::checked("zzzzzzzz", &plugins).unwrap_err().suggestion, "");
        assert_eq!(ExecutorName::new("box").as_str(), "box");
    }
}
