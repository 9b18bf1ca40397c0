//! Why `--affected` selected a task: one [`Reason`] per cause, as
//! `vx query`, `--dry` and `--dry=json` show them. Paths are relative to
//! the workspace root, `/`-separated.
//!
//! A cause that affects every task (a global input, the root `vx.toml`,
//! the root's dependencies, a lockfile change vx cannot narrow) is the
//! whole answer: vx stops there without matching each task's inputs, so
//! `--affected` stays as fast as a change to one of those always was.

use std::fmt;

use serde::Serialize;

/// How many changed files a reason names; the rest are counted in `more`.
pub(crate) const NAMED_FILES: usize = 10;

/// How many moved packages a lockfile reason's text names.
const NAMED_CHANGES: usize = 5;

/// One cause of a task being affected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Cause {
    /// Changed files among the task's inputs.
    Input { files: Vec<String>, more: usize },
    /// Its project's own `vx.toml` or `package.json`.
    Manifest { file: String },
    /// Changed `[workspace] global-inputs` files: every task.
    GlobalInput { files: Vec<String>, more: usize },
    /// The root `vx.toml`: every task.
    RootConfig { file: String },
    /// The root `package.json`'s dependency tables or `packageManager`,
    /// which every project's key takes: every task.
    RootDependencies { file: String, what: String },
    /// The project's slice of the lockfile moved (`root`: the workspace
    /// root's slice, which is in every task's key). `changes` names the
    /// packages (`react 18.2.0 → 18.3.1`); empty when only the digest
    /// moved (a dependency the lockfile does not resolve counts the
    /// whole file).
    Lockfile { file: String, root: bool, changes: Vec<String> },
    /// The lockfile changed and vx could not tell whose slice moved:
    /// every task, for the reason given.
    LockfileAll { file: String, why: String },
    /// A task it depends on is affected (the nearest: a direct dependency).
    Dependency { task: String },
}

/// A cause with its one-line text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Reason {
    #[serde(flatten)]
    pub cause: Cause,
    /// The cause in one line, as `--dry` prints it.
    pub text: String,
}

impl From<Cause> for Reason {
    fn from(cause: Cause) -> Self {
        let text = cause.to_string();
        Reason { cause, text }
    }
}

impl Cause {
    /// Whether the cause affects every task of the workspace.
    #[cfg(test)]
    pub(crate) fn is_global(&self) -> bool {
        matches!(
            self,
            Cause::GlobalInput { .. }
                | Cause::RootConfig { .. }
                | Cause::RootDependencies { .. }
                | Cause::LockfileAll { .. }
                | Cause::Lockfile { root: true, .. }
        )
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Input { files, more } => write!(f, "input {}", listed(files, *more)),
            Cause::Manifest { file } => write!(f, "its manifest {file}"),
            Cause::GlobalInput { files, more } => write!(f, "global input {}", listed(files, *more)),
            Cause::RootConfig { file } => write!(f, "the root {file}"),
            Cause::RootDependencies { file, what } => write!(f, "the root {file}: {what}"),
            Cause::Lockfile { file, root, changes } => {
                let whose = if *root { " (the workspace root's dependencies)" } else { "" };
                if changes.is_empty() {
                    return write!(
                        f,
                        "lockfile{whose}: {file} changed, and the slice counts the whole file \
                         (a dependency it does not resolve)"
                    );
                }
                let more = changes.len().saturating_sub(NAMED_CHANGES);
                let shown: Vec<&str> = changes.iter().take(NAMED_CHANGES).map(String::as_str).collect();
                write!(f, "lockfile{whose}: {}", shown.join(", "))?;
                if more > 0 {
                    write!(f, " and {more} more")?;
                }
                Ok(())
            }
            Cause::LockfileAll { file, why } => write!(f, "lockfile {file}: {why}"),
            Cause::Dependency { task } => write!(f, "dependency {task}"),
        }
    }
}

/// `a, b and 3 more`.
fn listed(files: &[String], more: usize) -> String {
    let mut text = files.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// Collects up to [`NAMED_FILES`] names and counts the rest.
#[derive(Debug, Default)]
pub(super) struct FileList {
    pub files: Vec<String>,
    pub more: usize,
}

impl FileList {
    pub(crate) fn push(&mut self, file: &str) {
        if self.files.len() < NAMED_FILES {
            self.files.push(file.to_string());
        } else {
            self.more += 1;
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_name_the_cause_and_json_carries_kind_fields_and_text() {
        let lock = Cause::Lockfile {
            file: "pnpm-lock.yaml".into(),
            root: false,
            changes: vec!["react 18.2.0 → 18.3.1".into()],
        };
        assert_eq!(lock.to_string(), "lockfile: react 18.2.0 → 18.3.1");
        let json = serde_json::to_value(Reason::from(lock)).expect("serializes");
        assert_eq!(json["kind"], "lockfile");
        assert_eq!(json["changes"][0], "react 18.2.0 → 18.3.1");
        assert_eq!(json["text"], "lockfile: react 18.2.0 → 18.3.1");
        let input = Cause::Input { files: vec!["a/x.ts".into(), "a/y.ts".into()], more: 3 };
        assert_eq!(input.to_string(), "input a/x.ts, a/y.ts and 3 more");
        assert_eq!(Cause::Dependency { task: "ui#build".into() }.to_string(), "dependency ui#build");
        assert!(!input.is_global());
        assert!(Cause::RootConfig { file: "vx.toml".into() }.is_global());
    }

    #[test]
    fn a_file_list_names_ten_and_counts_the_rest() {
        let mut list = FileList::default();
        for i in 0..13 {
            list.push(&format!("f{i}"));
        }
        assert_eq!((list.files.len(), list.more), (NAMED_FILES, 3));
    }
}
