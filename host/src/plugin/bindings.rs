//! Typed bindings of `wit/v0.1`, one `bindgen!` per world vx loads.
//!
//! The reporter world generates vx's own imports (`types`, `host`); the
//! cache-backend, executor, subscriber and command worlds map them onto the
//! reporter's through `with` (the executor adds `process`, the command
//! `workspace`), so an
//! `Error` or a `BlobWriter` is one Rust type whatever the world. WASI and
//! wasi:http map onto wasmtime-wasi's synchronous bindings: vx calls plugins
//! from blocking threads, never from inside the async runtime. The WASI
//! mapping is written once, in `world!`.

/// `bindgen!` for one world of `wit/v0.1`: the WASI mapping every world
/// shares (and wasi:http, with `http`), then the world's own `with` entries.
macro_rules! world {
    ($world:tt, { $($with:tt)* }) => {
        wasmtime::component::bindgen!({
            path: "../wit/v0.1",
            world: $world,
            with: {
                "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
                "wasi:filesystem": wasmtime_wasi::p2::bindings::sync::filesystem,
                "wasi:sockets": wasmtime_wasi::p2::bindings::sync::sockets,
                "wasi:cli": wasmtime_wasi::p2::bindings::cli,
                "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
                "wasi:random": wasmtime_wasi::p2::bindings::random,
                $($with)*
            },
        });
    };
    ($world:tt, http, { $($with:tt)* }) => {
        world!($world, {
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "vx:plugin/types": super::reporter::vx::plugin::types,
            "vx:plugin/host": super::reporter::vx::plugin::host,
            $($with)*
        });
    };
}

pub(crate) mod reporter {
    world!("reporter", {
        "vx:plugin/host.output-sink": crate::plugin::state::OutputSink,
        "vx:plugin/host.blob-reader": crate::plugin::state::BlobReader,
        "vx:plugin/host.blob-writer": crate::plugin::state::BlobWriter,
    });
}

pub(crate) mod cache_backend {
    world!("cache-backend", http, {});
}

pub(crate) mod executor {
    world!("executor", http, { "vx:plugin/process.child": crate::plugin::process::ChildProcess, });
}

pub(crate) mod subscriber {
    world!("subscriber", http, {});
}

pub(crate) mod command {
    world!("command", http, {});
}

pub(crate) use reporter::vx::plugin::host::Level;
pub(crate) use reporter::vx::plugin::types::{Error as WitError, PluginInfo, StreamKind};
