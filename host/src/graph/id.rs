//! Task ids: `project#task`, the one spelling used everywhere (output
//! prefixes, JSON, DOT, errors).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TaskId {
    pub project: String,
    pub task: String,
}

impl TaskId {
    pub(crate) fn new(project: impl Into<String>, task: impl Into<String>) -> Self {
        TaskId { project: project.into(), task: task.into() }
    }

    /// Splits `web#build` into its parts; `None` when there is no `#`.
    /// The last `#` separates, so scoped names like `@org/x#build` work.
    pub(crate) fn parse(text: &str) -> Option<TaskId> {
        let (project, task) = text.rsplit_once('#')?;
        Some(TaskId::new(project, task))
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.project, self.task)
    }
}
