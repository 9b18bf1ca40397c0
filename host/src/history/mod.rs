//! Run history in SQLite (`.vx/history.db`): each invocation (its command
//! line as one paste-able line, cwd, tags, times, exit code) and each task
//! run (id, key, status, cache outcome, duration, exit code, attempts),
//! the output of every failed attempt (bounded, compressed), plus the key
//! manifest of each task's latest run for `vx why`. From it come the ETAs
//! of the status line and `--dry`, `vx last` (and `--failed`'s logs),
//! `vx history`, `vx history --flaky`, the dashboard and the plugins' view
//! of history.
//!
//! This room owns every table, index and statement of the database: no
//! SQL is written outside it, and what it returns is typed rows.
//!
//! | file | owns |
//! |------|------|
//! | `schema` | the tables and indexes, migrations by `user_version` |
//! | `store` | opening the database (WAL, busy timeout), its errors, checkpoints |
//! | `rows` | the typed rows: invocations, task runs, a task's points, flakiness |
//! | `write` | recording an invocation, its task runs, plan, logs and manifests |
//! | `log_blob` | a failed attempt's output as stored: bounded to its first and last MiB, zstd |
//! | `spill` | failed attempts' logs held in an unnamed file until their run is recorded |
//! | `logs` | writing a run's kept logs; reading them back (`failed_log`, `kept_logs`) |
//! | `retention` | `[history] keep`: pruning as runs are recorded |
//! | `recorder` | history as a run-event subscriber |
//! | `runs` | invocations: recent, filtered, by id, counted; hit rate; last manifests |
//! | `eta` | p50 durations and flakiness of a task; the flaky tasks |
//! | `task_runs` | one task over time; one recorded run's tasks |
//! | `stats` | the dashboard's statistics over recent runs |

mod eta;
mod log_blob;
mod logs;
mod recorder;
mod retention;
mod rows;
mod runs;
mod schema;
mod spill;
mod stats;
mod store;
mod task_runs;
mod write;

#[cfg(test)]
mod tests;

pub(crate) use eta::recorded_p50s;
pub(crate) use recorder::HistoryRecorder;
pub(crate) use rows::{Flakiness, FlakyTask, Invocation, KeptLog};
pub(crate) use rows::{RecordedTask, TaskPoint, millis};
pub(crate) use runs::RunFilter;
pub(crate) use stats::STATS_WINDOW;
pub use store::History;
pub(crate) use store::HistoryError;
pub(crate) use store::checkpoint_in_background;
