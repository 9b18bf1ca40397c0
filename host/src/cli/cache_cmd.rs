//! `vx cache gc|clean|stats`: retention on demand, emptying the store, and
//! what it holds (with the hit rate from history).

use std::path::Path;

use clap::{Args, Subcommand};

use super::choice::{Format, choice};
use crate::cache::{Cache, CacheMode, state_dir};
use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::history::History;

/// Manage the local cache.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vx cache stats\n  vx cache stats --format json\n  vx cache gc       apply max-age and max-size now\n  vx cache clean    remove every entry"
)]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,

    /// The local cache directory (default `[cache] dir`, else `.vx/cache`).
    #[arg(long, value_name = "PATH", env = "VX_CACHE_DIR", global = true)]
    pub cache_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CacheAction {
    /// Apply retention now: entries past `max-age`, then least recently used past `max-size`.
    Gc,
    /// Remove every entry.
    Clean,
    /// Entries, size and hit rate.
    Stats {
        /// `text` (default) or `json`.
        #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = choice::<Format>())]
        format: Format,
    },
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

pub(crate) fn cmd_cache(args: CacheArgs, cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    // gc, clean and stats are about the local store: no remote backend.
    let cache = Cache::open(&ws, args.cache_dir.map(|d| cwd.join(d)), CacheMode::default(), false, None)?;
    match args.action {
        CacheAction::Gc => {
            let (max_size, max_age) = cache.retention();
            let removed = cache.store.gc(max_size, max_age);
            let left = cache.store.stats();
            println!(
                "removed {} entries ({}); {} entries ({}) remain",
                removed.entries,
                mib(removed.bytes),
                left.entries,
                mib(left.bytes)
            );
        }
        CacheAction::Clean => {
            let removed = cache.store.clean().map_err(|e| match e {
                crate::cache::CleanError::NotAStore { .. } => Error::usage(e.to_string()),
                crate::cache::CleanError::Io { path, source } => {
                    Error::io(format_args!("empty {}", path.display()), source)
                }
            })?;
            println!("removed {} entries ({})", removed.entries, mib(removed.bytes));
        }
        CacheAction::Stats { format } => {
            let stats = cache.store.stats();
            let (hits, lookups) =
                History::open(&state_dir(&ws).join("history.db")).and_then(|h| h.hit_rate()).unwrap_or((0, 0));
            let (max_size, max_age) = cache.retention();
            match format {
                Format::Json => println!(
                    "{}",
                    serde_json::json!({
                        "dir": cache.store.dir(),
                        "entries": stats.entries,
                        "bytes": stats.bytes,
                        "max_size": max_size,
                        "max_age_secs": max_age.as_secs(),
                        "hits": hits,
                        "lookups": lookups,
                    })
                ),
                Format::Text => {
                    println!("dir:      {}", cache.store.dir().display());
                    println!("entries:  {}", stats.entries);
                    println!("size:     {} (max {})", mib(stats.bytes), mib(max_size));
                    let rate = if lookups > 0 { format!("{}%", hits * 100 / lookups) } else { "-".into() };
                    println!("hit rate: {rate} ({hits} of {lookups} cacheable task runs)");
                }
            }
        }
    }
    Ok(0)
}
