//! World `subscriber`: the events of a run as they happen (an
//! OpenTelemetry exporter, a chat notifier). A subscriber watches and
//! cannot change the run; it may send what it saw out over
//! [`crate::http`] to the hosts the workspace grants.
//!
//! vx keeps one instance for the whole run, so the plugin value the export
//! macro keeps (made with `Default` on the first call) lives from the
//! run's `run-started` to its `run-finished`: buffer there, send at the end.

use std::sync::{Mutex, PoisonError};

use serde::de::DeserializeOwned;

use crate::bindings::imports::vx::plugin::types::Error as WitError;
use crate::{Describe, Error, config, panic};

pub use crate::bindings::subscriber::exports::vx::plugin::subscribe::{
    CacheLookup, CacheStatus, Event, EventKind, Level, Planned, ResourceUse, RunFinished, RunStarted, Status, Step,
    StepEnded, TaskFinished, TaskNote, TaskStarted, Warning,
};

/// A subscriber plugin. Export it with [`export_subscriber!`](crate::export_subscriber).
/// The macro keeps its value in a `static`, hence `Send`.
pub trait Subscriber: Describe + Default + Send {
    /// Deserialized from the plugin's `config` table on every call.
    type Config: DeserializeOwned;

    /// The next events of the run, in order. An error stops delivery to
    /// this plugin for the rest of the run (vx prints it once); the run's
    /// result never changes.
    fn on_events(&mut self, config: &Self::Config, events: Vec<Event>) -> Result<(), Error>;
}

#[doc(hidden)]
pub fn __on_events<T: Subscriber>(slot: &Mutex<Option<T>>, events: Vec<Event>) -> Result<(), WitError> {
    panic::install();
    let config = config::load::<T::Config>()?;
    let mut plugin = slot.lock().unwrap_or_else(PoisonError::into_inner);
    Ok(plugin.get_or_insert_with(T::default).on_events(&config, events)?)
}

/// Exports a [`Subscriber`] as the component's `vx:plugin/subscribe`
/// interface. Use it once, at the root of a `cdylib` crate.
#[macro_export]
macro_rules! export_subscriber {
    ($plugin:ty) => {
        #[doc(hidden)]
        struct __VxSubscriber;

        #[doc(hidden)]
        static __VX_SUBSCRIBER: ::std::sync::Mutex<::core::option::Option<$plugin>> = ::std::sync::Mutex::new(None);

        impl $crate::bindings::subscriber::exports::vx::plugin::subscribe::Guest for __VxSubscriber {
            fn info() -> $crate::__private::WitPluginInfo {
                $crate::__private::info::<$plugin>()
            }

            fn on_events(
                events: ::std::vec::Vec<$crate::subscriber::Event>,
            ) -> ::core::result::Result<(), $crate::__private::WitError> {
                $crate::subscriber::__on_events::<$plugin>(&__VX_SUBSCRIBER, events)
            }
        }

        $crate::bindings::subscriber::__vx_export_subscriber_world!(
            __VxSubscriber with_types_in $crate::bindings::subscriber
        );
    };
}
