//! The watch loop (DESIGN §6): `vx watch` runs the selection once, then
//! re-runs what each change affects, through the cache, and restarts the
//! servers whose inputs changed.
//!
//! | file | owns |
//! |------|------|
//! | `source` | file events: the OS watcher (`notify`), or polling |
//! | `tree` | which directories are watched (no `node_modules`, no links) |
//! | `debounce` | gathering a burst of events into one change |
//! | `filter` | which paths matter, and which tasks a change affects |
//! | `cycle` | the loop: load, run, wait, re-run, reload on config changes |
//!
//! docs/watch.md describes the semantics for users.

mod cycle;
mod debounce;
mod filter;
mod source;
mod tree;

pub(crate) use cycle::{WatchRequest, watch};
pub(crate) use tree::watched_dirs;
