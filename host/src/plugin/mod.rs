//! WebAssembly plugins behind the WIT interfaces in `wit/` (DESIGN §7):
//! reporters, cache backends, executors, subscribers and commands. The only module
//! that names wasmtime types.
//!
//! | file        | owns |
//! |-------------|------|
//! | `engine`    | the one `Engine`, its epoch ticker, the compiled-component cache |
//! | `bindings`  | `bindgen!` per world from `wit/v0.1` |
//! | `state`     | a store's data: WASI from grants only, wasi:http's `allow-hosts` check, vx's `host` imports, the memory limiter |
//! | `grants`    | `[plugins.NAME]` grants and limits |
//! | `lock`      | pins in `vx.lock` |
//! | `install`   | `vx plugin add` / `remove`: check, copy, pin, configure, and undo |
//! | `first_party` | junit, http-cache, otel and sandbox, built into the binary: added by name, loaded without their file |
//! | `oci`       | `vx plugin add oci://…` and `vx plugin publish`: the Wasm OCI artifact layout over the distribution API |
//! | `installed` | `vx plugin list`: pin state, compiled or not, grants and requests |
//! | `load`      | load, pin check, classify, link check, calls under limits |
//! | `calls`     | the typed calls and the checks on what plugins return |
//! | `pool`      | a plugin's live instances, reused across calls |
//! | `cache_backend` | a cache-backend plugin as the cache's `Backend`, loaded on first use |
//! | `stdio`     | guest stdout and stderr, captured and drained per call |
//! | `process`   | the `process` import: `allow-programs`, spawning through the guard |
//! | `reporter`  | `vx run --report`: the built-in `markdown` or a reporter plugin, rendered and written |
//! | `subscriber` | subscriber plugins: the run's events queued to each on a thread of its own |
//! | `command`   | command plugins: `vx NAME ARGS`, their usage, the read-only `workspace` import |
//! | `subscriber_events` | the run's events as `vx:plugin/subscribe` records, times on the wall clock |
//! | `scaffold`  | `vx plugin new`: a plugin crate per world, ready to build |
//! | `error`     | `PluginError`, naming the plugin and the key that mends it |
//! | `text`      | what a plugin says to the user, made one printable, bounded line |
//!
//! Errors that leave the module are typed: `PluginError` for loads and
//! calls, `LockError` for `vx.lock`, `EngineError` for the engine's start.
//!
//! Calls are synchronous: vx makes them from blocking threads (or outside
//! the async runtime). Every call borrows an instance from its plugin's
//! pool (`pool`), with the limits restarted per call; a subscriber keeps
//! one instance for the whole run (`subscriber`), on a thread of its own,
//! its limits also restarted per call. A call is stopped by its CPU
//! budget (the thread's CPU time, checked every epoch tick), its wall-clock
//! timeout (the same check; HTTP requests carry it as their timeouts) or
//! its memory limit.

mod bindings;
mod cache_backend;
mod calls;
mod command;
mod engine;
mod error;
pub(crate) mod first_party;
pub(crate) mod fuzz;
mod grants;
mod install;
mod installed;
mod load;
mod lock;
pub(crate) mod oci;
mod pool;
mod process;
mod reporter;
mod scaffold;
mod state;
mod stdio;
mod subscriber;
mod subscriber_events;
mod text;

pub(crate) use cache_backend::PluginBackend;
pub use calls::ExecTask;
pub(crate) use calls::Info;
pub use calls::RunReport;
#[cfg(test)]
pub(crate) use command::RESERVED_VERBS;
pub(crate) use command::{WorkspaceModel, help_text, is_reserved};
pub use engine::Origin;
pub(crate) use engine::compiled;
pub use engine::start_engine;
pub(crate) use install::{AddRequest, Added, add, add_bytes, remove};
pub(crate) use installed::{Installed, installed};
pub use load::LoadedPlugin;
pub use load::load_bytes_ungranted;
pub use load::load_bytes_with_config;
pub use load::read_plugin_file;
pub(crate) use load::{MAX_PLUGIN_SIZE, World, load_configured, toml_to_json};
pub(crate) use lock::{LOCK_FILE, Pin, read_pin, remove_pin, write_pin, write_pin_source};
pub use pool::max_idle as pool_size;
pub use process::{ExecContext, ExecControl};
pub(crate) use reporter::Reporter;
pub(crate) use scaffold::scaffold;
pub(crate) use state::SinkFn;
pub(crate) use subscriber::PluginSubscribers;
