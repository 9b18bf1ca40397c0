//! Entry points for the fuzz targets in `tests/fuzz` into parsers that are
//! private to their modules. Everything else the targets call is vx's
//! ordinary public API. Not part of that API: hidden from the docs, and
//! free to change with the targets.

pub use crate::cache::archive::{OutputDirs, unpack as unpack_archive};
pub use crate::plugin::fuzz::{plugin_error, plugin_info};
pub use crate::remote::fuzz::{FUZZ_KEY, action_result, tree};
