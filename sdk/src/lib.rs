//! `vx-plugin-sdk`: write vx plugins in Rust as WebAssembly components.
//!
//! A plugin implements one world of the `vx:plugin@0.1.0` WIT package
//! (`wit/v0.1` in the vx repository) through one trait:
//!
//! | world           | trait                          | export macro              |
//! |-----------------|--------------------------------|---------------------------|
//! | `reporter`      | [`reporter::Reporter`]         | [`export_reporter!`]      |
//! | `cache-backend` | [`cache_backend::CacheBackend`]| [`export_cache_backend!`] |
//! | `executor`      | [`executor::Executor`]         | [`export_executor!`]      |
//! | `subscriber`    | [`subscriber::Subscriber`]     | [`export_subscriber!`]    |
//! | `command`       | [`command::Command`]           | [`export_command!`]       |
//!
//! Every plugin also implements [`Describe`]. The export macros parse the
//! plugin's typed `Config` from the host's JSON ([`config`]), turn the
//! SDK [`Error`] into the WIT `error` variant, and install a panic hook that
//! logs the panic text to vx before the trap ([`panic`]).
//!
//! Build with `--target wasm32-wasip2` and `crate-type = ["cdylib"]`. The
//! crate also builds for the host target, so plugin logic can be unit-tested
//! with plain `cargo test`; calls into the host panic there.

pub mod bindings;
pub mod blob;
pub mod cache_backend;
pub mod command;
pub mod config;
mod error;
pub mod executor;
pub mod http;
mod info;
pub mod log;
pub mod panic;
pub mod reporter;
pub mod subscriber;

pub use config::NoConfig;
pub use error::{Context, Error, ErrorKind};
pub use info::{Describe, PluginInfo};

/// What the export macros expand to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bindings::imports::vx::plugin::types::{Error as WitError, PluginInfo as WitPluginInfo};

    pub fn info<T: crate::Describe>() -> WitPluginInfo {
        crate::panic::install();
        T::info().into()
    }
}
