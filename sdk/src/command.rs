//! World `command`: a verb of vx. A plugin added as `[plugins.NAME]` runs
//! as `vx NAME ARGS...`: vx calls [`Command::run`] with the arguments
//! after the name, and what the plugin prints to stdout and stderr goes to
//! vx's, unchanged. The returned `u8` is vx's exit code.
//!
//! [`workspace`] reads the workspace vx runs in (projects, tasks,
//! dependencies, history), read only; anything else (files, env, hosts)
//! needs a grant in `[plugins.NAME]`, as for every plugin.

use serde::de::DeserializeOwned;

use crate::bindings::imports::vx::plugin::types::Error as WitError;
use crate::{Describe, Error, config, panic};

pub use crate::bindings::command::exports::vx::plugin::verb::UsageText as Usage;

/// A command plugin. Export it with [`export_command!`](crate::export_command).
pub trait Command: Describe {
    /// Deserialized from the plugin's `config` table on every call.
    type Config: DeserializeOwned;

    /// `about` is the one line `vx --help` lists (vx records it when the
    /// plugin is added); `help` is what `vx NAME --help` prints.
    fn usage() -> Usage;

    /// Runs the verb with the arguments after its name, as typed.
    fn run(config: &Self::Config, args: Vec<String>) -> Result<u8, Error>;
}

#[doc(hidden)]
pub fn __run<T: Command>(args: Vec<String>) -> Result<u8, WitError> {
    panic::install();
    let config = config::load::<T::Config>()?;
    Ok(T::run(&config, args)?)
}

#[doc(hidden)]
pub fn __usage<T: Command>() -> Usage {
    panic::install();
    T::usage()
}

/// The workspace vx runs in, read only: what `vx show --format json` and
/// `vx history` print.
pub mod workspace {
    use crate::Error;
    use crate::bindings::command::vx::plugin::workspace as wit;

    pub use wit::{Invocation, Project, Task, TaskStats};

    /// Every project with its tasks, dependencies and dependents.
    pub fn projects() -> Vec<Project> {
        wit::projects()
    }

    /// The most recent `vx` invocations, newest first.
    pub fn recent_invocations(limit: u32) -> Result<Vec<Invocation>, Error> {
        Ok(wit::recent_invocations(limit)?)
    }

    /// History's figures for one task, `project#task`.
    pub fn task_stats(task: &str) -> Result<TaskStats, Error> {
        Ok(wit::task_history(task)?)
    }
}

/// Exports a [`Command`] as the component's `vx:plugin/verb` interface.
/// Use it once, at the root of a `cdylib` crate.
#[macro_export]
macro_rules! export_command {
    ($plugin:ty) => {
        #[doc(hidden)]
        struct __VxCommand;

        impl $crate::bindings::command::exports::vx::plugin::verb::Guest for __VxCommand {
            fn info() -> $crate::__private::WitPluginInfo {
                $crate::__private::info::<$plugin>()
            }

            fn usage() -> $crate::command::Usage {
                $crate::command::__usage::<$plugin>()
            }

            fn run(args: ::std::vec::Vec<::std::string::String>) -> ::core::result::Result<u8, $crate::__private::WitError> {
                $crate::command::__run::<$plugin>(args)
            }
        }

        $crate::bindings::command::__vx_export_command_world!(
            __VxCommand with_types_in $crate::bindings::command
        );
    };
}
