//! `vx.lock`'s projects as vx writes and reads them: each project's
//! directory, dependencies and resolved tasks, taken from the
//! configuration, written beside the plugin pins (which it leaves as they
//! are) and read back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{LockError, secrets};
use crate::config::{Command, Workspace};

pub(crate) const LOCK_FILE: &str = "vx.lock";
pub(crate) const LOCK_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum LockedCommand {
    Shell(String),
    Argv(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct LockedTask {
    pub command: LockedCommand,
    pub depends_on: Vec<String>,
    /// Absent: every file of the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<String>>,
    pub outputs: Vec<String>,
    pub env: Vec<String>,
    pub executor: String,
    pub cache: bool,
    pub persistent: bool,
    // Added after the first lock format: absent in an older lock, and left
    // out when empty, so that lock stays valid for a config without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runtime: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct LockedProject {
    pub dir: String,
    pub depends_on: Vec<String>,
    pub tasks: BTreeMap<String, LockedTask>,
}

/// The part of `vx.lock` that `vx lock` owns.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct Lock {
    #[serde(default)]
    pub projects: BTreeMap<String, LockedProject>,
}

pub(crate) fn lock_path(root: &Path) -> PathBuf {
    root.join(LOCK_FILE)
}

/// `vx lock`: writes the lock the configuration resolves to, unless a task
/// holds what looks like a credential; returns what was written.
pub(crate) fn update(ws: &Workspace) -> Result<Lock, LockError> {
    let lock = Lock::of(ws);
    secrets::refuse_secrets(ws)?;
    lock.write(&ws.root)?;
    Ok(lock)
}

impl Lock {
    /// The lock the workspace's configuration resolves to now.
    pub(crate) fn of(ws: &Workspace) -> Lock {
        let projects = ws
            .projects
            .iter()
            .map(|p| {
                let tasks = p
                    .tasks
                    .values()
                    .map(|t| {
                        let command = match &t.command {
                            Command::Shell(s) => LockedCommand::Shell(s.clone()),
                            Command::Argv(a) => LockedCommand::Argv(a.clone()),
                        };
                        let task = LockedTask {
                            command,
                            depends_on: t.depends_on.iter().map(ToString::to_string).collect(),
                            inputs: t.inputs.clone(),
                            outputs: t.outputs.clone(),
                            env: t.env.clone(),
                            executor: t.executor.to_string(),
                            cache: t.cache,
                            persistent: t.persistent,
                            pass_env: t.pass_env.clone(),
                            runtime: t.runtime.clone(),
                            retries: t.retries,
                        };
                        (t.name.clone(), task)
                    })
                    .collect();
                let deps = p.deps.iter().map(|&d| ws.projects[d].name.clone()).collect();
                (p.name.clone(), LockedProject { dir: p.rel_dir.clone(), depends_on: deps, tasks })
            })
            .collect();
        Lock { projects }
    }

    /// Reads the projects of `vx.lock`; `Ok(None)` when there is no file.
    pub(crate) fn read(root: &Path) -> Result<Option<Lock>, LockError> {
        let path = lock_path(root);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(LockError::Read(e)),
        };
        toml::from_str(&text).map(Some).map_err(|e| LockError::Invalid(e.message().to_string()))
    }

    /// Writes the projects into `vx.lock`, keeping every other table
    /// (plugin pins) as it is. Atomic: written beside and renamed.
    pub(crate) fn write(&self, root: &Path) -> Result<(), LockError> {
        let path = lock_path(root);
        let mut doc = match std::fs::read_to_string(&path) {
            Ok(t) => t.parse::<toml_edit::DocumentMut>().map_err(LockError::Unparsable)?,
            Err(_) => toml_edit::DocumentMut::new(),
        };
        let rendered = toml::to_string(self)?;
        let fresh: toml_edit::DocumentMut = rendered.parse().map_err(LockError::Reparse)?;
        doc.remove("projects");
        doc.insert("version", toml_edit::value(i64::from(LOCK_VERSION)));
        if let Some(projects) = fresh.get("projects") {
            doc.insert("projects", projects.clone());
        }
        doc.decor_mut().set_prefix(
            "# vx.lock: the resolved tasks of this workspace and the pins of its plugins.\n\
             # Written by `vx lock` and `vx plugin add`; checked by `vx lock --check` and `vx run --frozen`.\n",
        );
        let tmp = root.join(format!(".{LOCK_FILE}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, doc.to_string()).and_then(|()| std::fs::rename(&tmp, &path)).map_err(LockError::Write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_names_round_trip() {
        let mut lock = Lock::default();
        for name in ["__proto__", "constructor", "toString", " ", "", "ünï ☃", "a.b", "\"q\""] {
            let task = LockedTask {
                command: LockedCommand::Argv(vec!["echo".into(), name.into()]),
                depends_on: vec![format!("^{name}")],
                inputs: None,
                outputs: vec![],
                env: vec![],
                executor: "local".into(),
                cache: false,
                persistent: false,
                pass_env: vec![format!("{name}_HOME")],
                runtime: vec![format!("echo {name}")],
                retries: 2,
            };
            let tasks = BTreeMap::from([(name.to_string(), task)]);
            lock.projects.insert(name.to_string(), LockedProject { dir: name.into(), depends_on: vec![], tasks });
        }
        let text = toml::to_string(&lock).unwrap();
        let back: Lock = toml::from_str(&text).unwrap();
        assert_eq!(back, lock);
    }

    #[test]
    fn a_lock_written_before_pass_env_runtime_and_retries_still_reads() {
        let text = "[projects.app]\ndir = \"app\"\ndepends-on = []\n\
                    [projects.app.tasks.build]\ncommand = \"true\"\ndepends-on = []\noutputs = []\nenv = []\n\
                    executor = \"local\"\ncache = true\npersistent = false\n";
        let lock: Lock = toml::from_str(text).unwrap();
        let task = &lock.projects["app"].tasks["build"];
        assert!(task.pass_env.is_empty() && task.runtime.is_empty() && task.retries == 0);
        assert!(!toml::to_string(&lock).unwrap().contains("retries"), "empty fields stay out of the file");
    }
}
