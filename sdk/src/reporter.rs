//! World `reporter`: turn a finished run into report bytes (JUnit XML,
//! Markdown, ...). vx writes them to `--report-file`, so a reporter needs
//! no grant.

use serde::de::DeserializeOwned;

use crate::bindings::imports::vx::plugin::types::Error as WitError;
use crate::{Describe, Error, config, panic};

pub use crate::bindings::reporter::exports::vx::plugin::report::{Run, Status, TaskResult, Tier};

/// A reporter plugin. Export it with [`export_reporter!`](crate::export_reporter).
pub trait Reporter: Describe {
    /// Deserialized from the plugin's `config` table on every call.
    type Config: DeserializeOwned;

    fn render(config: &Self::Config, run: &Run) -> Result<Vec<u8>, Error>;
}

#[doc(hidden)]
pub fn __render<T: Reporter>(run: Run) -> Result<Vec<u8>, WitError> {
    panic::install();
    let config = config::load::<T::Config>()?;
    Ok(T::render(&config, &run)?)
}

/// Exports a [`Reporter`] as the component's `vx:plugin/report` interface.
/// Use it once, at the root of a `cdylib` crate.
#[macro_export]
macro_rules! export_reporter {
    ($plugin:ty) => {
        #[doc(hidden)]
        struct __VxReporter;

        impl $crate::bindings::reporter::exports::vx::plugin::report::Guest for __VxReporter {
            fn info() -> $crate::__private::WitPluginInfo {
                $crate::__private::info::<$plugin>()
            }

            fn render(
                run: $crate::reporter::Run,
            ) -> ::core::result::Result<::std::vec::Vec<u8>, $crate::__private::WitError> {
                $crate::reporter::__render::<$plugin>(run)
            }
        }

        $crate::bindings::reporter::__vx_export_reporter_world!(
            __VxReporter with_types_in $crate::bindings::reporter
        );
    };
}
