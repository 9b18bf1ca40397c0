//! `vx dashboard`: a local web page over `.vx/history.db`, served on
//! 127.0.0.1 with its assets inside the binary (docs/observability.md).
//!
//! | file | owns |
//! |------|------|
//! | `server` | the HTTP/1.1 listener (hyper), one blocking call per request |
//! | `routes` | the page and the JSON API: `/api/runs`, `/api/runs/ID`, `/api/runs/ID/tasks/TASK/logs`, `/api/tasks/ID/history`, `/api/stats`, `/api/live` |
//! | `queries` | the runs list with its filters, a task over time, a task's kept logs, the statistics |
//! | `run_doc` | a recorded run as the summary document `--summarize` writes |
//! | `marker` | `.vx/dashboard.json`: a dashboard is up, so runs write live files |
//! | `live` | the live file of a run in progress, and reading them back |
//! | `page` | the page: the report's run view and styles plus the dashboard's script |

mod live;
mod marker;
mod page;
mod queries;
mod routes;
mod run_doc;
mod server;

pub(crate) use live::LiveFile;
pub(crate) use marker::{live_dashboard, live_dir, write_marker};
pub(crate) use routes::App;
pub(crate) use server::{bind, serve};
