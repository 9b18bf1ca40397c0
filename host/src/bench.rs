//! What the plugin benchmark (`host/benches/plugins.rs`) drives: loading
//! components, their calls, and the built-in markdown reporter for scale.
//! vx's rooms are private to the crate (lib.rs), so this is the only way
//! in. Not part of any API: hidden from the docs, and free to change with
//! the benchmark.

pub use crate::events::{CacheOutcome, RunSummary, TaskResult, TaskStatus};
pub use crate::guard::Groups;
pub use crate::plugin::{
    ExecContext, ExecControl, ExecTask, LoadedPlugin, Origin, RunReport, load_bytes_ungranted, load_bytes_with_config,
    pool_size, read_plugin_file, start_engine,
};
pub use crate::report::markdown::render as render_markdown;
