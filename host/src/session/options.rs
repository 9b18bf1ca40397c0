//! What a command asks of a run's consumers. `vx run` fills it from its
//! flags; `vx watch` and `--verify` from what they always want.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use crate::plugin::Reporter;
use crate::report::Step;

/// Which front shows the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrontKind {
    /// Prefixed lines as tasks write them; `details` adds `--summary`'s
    /// list after the run; `to_stderr` keeps stdout for a JSON report.
    Stream { details: bool, to_stderr: bool },
    /// The terminal UI when `tui::wanted` says so (`asked` is `--ui`),
    /// else the stream.
    Auto { asked: Option<bool>, details: bool },
}

/// The consumers a run gets, besides its front.
#[derive(Debug)]
pub(crate) struct SessionOptions {
    /// The arguments after `vx`, as typed (or as picked).
    pub argv: Vec<String>,
    /// Where vx was started: relative `--summarize`/`--profile` paths and
    /// `vx last` start there.
    pub cwd: PathBuf,
    /// `--tag KEY=VALUE`s, kept in history.
    pub tags: Vec<(String, String)>,
    /// One reading of the wall and monotonic clocks at the run's start.
    pub started: SystemTime,
    pub origin: Instant,
    pub front: FrontKind,
    /// Record the run in `.vx/history.db`.
    pub history: bool,
    /// Send the run's events to the workspace's subscriber plugins.
    pub plugins: bool,
    /// Write the live file while a dashboard is up.
    pub live: bool,
    /// `--summarize[=FILE]`: an empty path is the default file.
    pub summarize: Option<OsString>,
    /// `--profile[=FILE]`, with vx's own steps before the run.
    pub profile: Option<(OsString, Vec<Step>)>,
    /// `--report NAME [--report-file PATH]`, opened before the run.
    pub report: Option<(Reporter, Option<PathBuf>)>,
}

impl SessionOptions {
    /// A run that only shows itself on `front`: no history, no files, no
    /// plugins (the runs of `--verify`).
    pub(crate) fn shown_only(argv: &[String], cwd: PathBuf, front: FrontKind) -> SessionOptions {
        SessionOptions {
            argv: argv.to_vec(),
            cwd,
            tags: Vec::new(),
            started: SystemTime::now(),
            origin: Instant::now(),
            front,
            history: false,
            plugins: false,
            live: false,
            summarize: None,
            profile: None,
            report: None,
        }
    }
}

/// The directory vx was started in (before `-C`), where a line pasted
/// from `vx last` runs; `fallback` when it cannot be read.
pub(crate) fn caller_dir(fallback: &Path) -> PathBuf {
    std::env::current_dir().and_then(|d| d.canonicalize()).unwrap_or_else(|_| fallback.to_path_buf())
}
