//! The bodies of vx's fuzz targets, one per kind of outside input, shared
//! by the libFuzzer binaries (`fuzz_targets/`, built by `scripts/fuzz
//! build`) and by this crate's test, which replays the corpus and the
//! regressions through them without instrumentation.
//!
//! Each body feeds its input to the parser the way vx reads it (from
//! files in a scratch directory where vx reads files) and asserts the
//! property of every parser of outside input: it returns, it does not
//! panic, and what it rejects is an error value that renders as one line.
//! Memory and time are bounded by libFuzzer's limits (`scripts/fuzz`).

pub mod files;
pub mod scratch;
pub mod targets;

/// A target: its name (the binary, and its directories under `corpus/`
/// and `regressions/`) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order `scripts/fuzz smoke` runs them.
pub const TARGETS: &[Target] = &[
    ("vx_toml", targets::config::vx_toml),
    ("package_json", targets::config::package_json),
    ("pnpm_workspace", targets::config::pnpm_workspace),
    ("lock_npm", targets::lockfile::lock_npm),
    ("lock_pnpm", targets::lockfile::lock_pnpm),
    ("lock_yarn", targets::lockfile::lock_yarn),
    ("lock_bun", targets::lockfile::lock_bun),
    ("init_turbo", targets::init::init_turbo),
    ("init_nx", targets::init::init_nx),
    ("init_moon", targets::init::init_moon),
    ("cache_entry", targets::cache::cache_entry),
    ("cache_archive", targets::cache::cache_archive),
    ("stat_index", targets::cache::stat_index),
    ("history", targets::history::history),
    ("reapi_action_result", targets::reapi::reapi_action_result),
    ("reapi_tree", targets::reapi::reapi_tree),
    ("plugin_reply", targets::plugin::plugin_reply),
];

/// Panics unless `rendered`, an error as vx prints it, is one line.
pub fn assert_one_line(rendered: &str) {
    assert!(!rendered.contains(['\n', '\r']), "an error rendered as more than one line: {rendered:?}");
}
