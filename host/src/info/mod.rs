//! `vx info`, the doctor: what this vx is, the workspace it sees, its
//! cache, history, remote tier and plugins, and what the kernel offers the
//! guard, the sandbox and the watcher, with every problem found and the
//! one line that mends it.
//!
//! Gathering never fails: a workspace that does not load is a problem in
//! the report (the rest still describes the machine), so the doctor works
//! exactly when something is wrong.

//! | file | owns |
//! |------|------|
//! | `facts` | [`Info`] and its parts: everything the doctor reports, as data |
//! | `gather` | looking at the workspace, cache, history, remote tier and plugins from `cwd` |
//! | `system` | what the kernel offers the guard, the sandbox and the watcher |
//! | `problems` | each problem found, with the line that mends it |
//! | `text` | the report for people |

mod facts;
mod gather;
mod problems;
pub(crate) mod system;
mod text;

pub(crate) use facts::{Info, Options};
pub(crate) use gather::gather;
pub(crate) use text::render;
