//! Typed bindings of `wit/v0.1`, one `bindgen!` per world vx loads.
//!
//! The reporter world generates vx's own imports (`types`, `host`); the
//! cache-backend, executor, subscriber and command worlds map them onto the
//! reporter's through `with` (the executor adds `process`, the command
//! `workspace`), so an
//! `Error` or a `BlobWriter` is one Rust type whatever the world. WASI and
//! wasi:http map onto wasmtime-wasi's synchronous bindings: vx calls plugins
//! from blocking threads, never from inside the async runtime.

pub mod reporter {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1",
        world: "reporter",
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
            "wasi:filesystem": wasmtime_wasi::p2::bindings::sync::filesystem,
            "wasi:sockets": wasmtime_wasi::p2::bindings::sync::sockets,
            "wasi:cli": wasmtime_wasi::p2::bindings::cli,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:random": wasmtime_wasi::p2::bindings::random,
            "vx:plugin/host.output-sink": crate::plugin::state::OutputSink,
            "vx:plugin/host.blob-reader": crate::plugin::state::BlobReader,
            "vx:plugin/host.blob-writer": crate::plugin::state::BlobWriter,
        },
    });
}

pub mod cache_backend {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1",
        world: "cache-backend",
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
            "wasi:filesystem": wasmtime_wasi::p2::bindings::sync::filesystem,
            "wasi:sockets": wasmtime_wasi::p2::bindings::sync::sockets,
            "wasi:cli": wasmtime_wasi::p2::bindings::cli,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:random": wasmtime_wasi::p2::bindings::random,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "vx:plugin/types": super::reporter::vx::plugin::types,
            "vx:plugin/host": super::reporter::vx::plugin::host,
        },
    });
}

pub mod executor {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1",
        world: "executor",
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
            "wasi:filesystem": wasmtime_wasi::p2::bindings::sync::filesystem,
            "wasi:sockets": wasmtime_wasi::p2::bindings::sync::sockets,
            "wasi:cli": wasmtime_wasi::p2::bindings::cli,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:random": wasmtime_wasi::p2::bindings::random,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "vx:plugin/types": super::reporter::vx::plugin::types,
            "vx:plugin/host": super::reporter::vx::plugin::host,
            "vx:plugin/process.child": crate::plugin::process::ChildProcess,
        },
    });
}

pub mod subscriber {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1",
        world: "subscriber",
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
            "wasi:filesystem": wasmtime_wasi::p2::bindings::sync::filesystem,
            "wasi:sockets": wasmtime_wasi::p2::bindings::sync::sockets,
            "wasi:cli": wasmtime_wasi::p2::bindings::cli,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:random": wasmtime_wasi::p2::bindings::random,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "vx:plugin/types": super::reporter::vx::plugin::types,
            "vx:plugin/host": super::reporter::vx::plugin::host,
        },
    });
}

pub mod command {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1",
        world: "command",
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
            "wasi:filesystem": wasmtime_wasi::p2::bindings::sync::filesystem,
            "wasi:sockets": wasmtime_wasi::p2::bindings::sync::sockets,
            "wasi:cli": wasmtime_wasi::p2::bindings::cli,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:random": wasmtime_wasi::p2::bindings::random,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "vx:plugin/types": super::reporter::vx::plugin::types,
            "vx:plugin/host": super::reporter::vx::plugin::host,
        },
    });
}

pub use reporter::vx::plugin::host::Level;
pub use reporter::vx::plugin::types::{Error as WitError, PluginInfo, StreamKind};
