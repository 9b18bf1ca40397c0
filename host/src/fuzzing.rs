//! What the fuzz targets in `tests/fuzz` drive: the parsers of every input
//! vx reads from a user, a cache, a plugin or a server. vx's rooms are
//! private to the crate (lib.rs), so this is the only way in. Not part of
//! any API: hidden from the docs, and free to change with the targets.

pub use crate::cache::archive::{OutputDirs, unpack as unpack_archive};
pub use crate::cache::{CacheKey, Entry, diff_manifests, read_members};
pub use crate::config::translate::{SourceKind, render as render_init, translate as translate_init};
pub use crate::config::{ConfigError, expand_project_globs, load_workspace, read_package_json, read_pnpm_workspace};
pub use crate::history::History;
pub use crate::inputs::{FileHasher, GlobFilter};
pub use crate::lockfile::{Lockfile, LockfileKind, PackageJson};
pub use crate::plugin::fuzz::{plugin_error, plugin_info};
pub use crate::remote::fuzz::{FUZZ_KEY, action_result, tree};
