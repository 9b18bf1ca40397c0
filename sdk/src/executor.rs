//! World `executor`: run one task. The plugin never spawns through WASI:
//! it asks vx through `process`, so every child is checked against the
//! plugin's `allow-programs` grant and killed with the run.

use serde::de::DeserializeOwned;

use crate::bindings::imports::vx::plugin::types::Error as WitError;
use crate::{Describe, Error, config, panic};

pub use crate::bindings::executor::exports::vx::plugin::exec::{Outcome, Task};
pub use crate::bindings::imports::vx::plugin::host::OutputSink;
pub use crate::bindings::imports::vx::plugin::process::{Child, Command, spawn};
pub use crate::bindings::imports::vx::plugin::types::StreamKind;

/// An executor plugin. Export it with [`export_executor!`](crate::export_executor).
pub trait Executor: Describe {
    /// Deserialized from the plugin's `config` table on every call.
    type Config: DeserializeOwned;

    /// Runs `task`, streaming its output into `out`.
    fn execute(config: &Self::Config, task: Task, out: &OutputSink) -> Result<Outcome, Error>;
}

/// The task's executor `options` table, deserialized; errors name the key
/// as `options.KEY`.
pub fn options<T: DeserializeOwned>(task: &Task) -> Result<T, Error> {
    config::parse("options", &task.options)
}

impl Command {
    pub fn new(program: impl Into<String>) -> Self {
        Command { program: program.into(), args: Vec::new(), env: Vec::new(), cwd: None }
    }

    #[must_use]
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    #[must_use]
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Workspace-relative; the task's directory when not set.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<String>) -> Self {
        self.cwd = Some(dir.into());
        self
    }
}

/// Copies the child's output into `out` until both streams close, then
/// waits for it and returns its exit code.
pub fn forward_output(child: &Child, out: &OutputSink) -> Result<i32, Error> {
    while let Some((kind, data)) = child.next_output()? {
        out.write(kind, &data);
    }
    Ok(child.wait()?)
}

#[doc(hidden)]
pub fn __execute<T: Executor>(task: Task, out: &OutputSink) -> Result<Outcome, WitError> {
    panic::install();
    let config = config::load::<T::Config>()?;
    Ok(T::execute(&config, task, out)?)
}

/// Exports an [`Executor`] as the component's `vx:plugin/exec` interface.
/// Use it once, at the root of a `cdylib` crate.
#[macro_export]
macro_rules! export_executor {
    ($plugin:ty) => {
        #[doc(hidden)]
        struct __VxExecutor;

        impl $crate::bindings::executor::exports::vx::plugin::exec::Guest for __VxExecutor {
            fn info() -> $crate::__private::WitPluginInfo {
                $crate::__private::info::<$plugin>()
            }

            fn execute(
                task: $crate::executor::Task,
                out: &$crate::executor::OutputSink,
            ) -> ::core::result::Result<$crate::executor::Outcome, $crate::__private::WitError> {
                $crate::executor::__execute::<$plugin>(task, out)
            }
        }

        $crate::bindings::executor::__vx_export_executor_world!(
            __VxExecutor with_types_in $crate::bindings::executor
        );
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_builder_collects_everything() {
        let cmd = Command::new("docker").arg("run").args(["--rm", "img"]).env("A", "1").cwd("web");
        assert_eq!(cmd.program, "docker");
        assert_eq!(cmd.args, ["run", "--rm", "img"]);
        assert_eq!(cmd.env, [("A".to_string(), "1".to_string())]);
        assert_eq!(cmd.cwd.as_deref(), Some("web"));
    }

    #[test]
    fn options_errors_name_the_options_key() {
        #[derive(Debug, serde::Deserialize)]
        struct Opts {
            #[expect(dead_code, reason = "only the failure to parse it is tested")]
            image: String,
        }
        let task = Task {
            id: "web#build".into(),
            argv: vec![],
            env: vec![],
            cwd: "web".into(),
            timeout_ms: None,
            options: r#"{"image": 3}"#.into(),
        };
        let error = options::<Opts>(&task).unwrap_err();
        assert_eq!(error, Error::invalid_config("options.image: invalid type: integer `3`, expected a string"));
    }
}
