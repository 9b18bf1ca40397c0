//! The dashboard's routes: the page, and a small JSON API over history
//! (documented in docs/observability.md). A request is answered from its
//! method, path and query alone, synchronously: the server calls
//! [`App::respond`] off the async runtime. Bad input (an unknown run, a
//! number that is not one) is a 4xx with `{"error": …}`, never a panic.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::queries::{runs, stats, task_history, task_logs};
use super::{live::read_live, marker::live_dir, page, run_doc::recorded_document};
use crate::cache::{LocalStore, StoreStats};
use crate::history::{History, HistoryError, RunFilter};

/// The largest page of the runs list.
pub(crate) const MAX_LIMIT: usize = 500;
/// How long the cache's size is reused before the store is walked again.
const STORE_STATS_FOR: Duration = Duration::from_secs(10);

/// An answer: status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    fn json(status: u16, value: &Value) -> Response {
        Response {
            status,
            content_type: "application/json",
            body: serde_json::to_vec(value).expect("a JSON value serializes"),
        }
    }

    fn error(status: u16, message: impl Into<String>) -> Response {
        Response::json(status, &json!({"error": message.into()}))
    }
}

/// What the routes read: history, the live files, the local store, and
/// the tasks' descriptions as the workspace gave them when the dashboard
/// started (history keeps none).
#[derive(Debug)]
pub(crate) struct App {
    history: Mutex<History>,
    state_dir: PathBuf,
    store: LocalStore,
    store_stats: Mutex<Option<(Instant, StoreStats)>>,
    descriptions: HashMap<String, String>,
}

impl App {
    pub(crate) fn new(history: History, state_dir: PathBuf, store: LocalStore) -> App {
        App {
            history: Mutex::new(history),
            state_dir,
            store,
            store_stats: Mutex::new(None),
            descriptions: HashMap::new(),
        }
    }

    /// Describes tasks (`project#task` to its `description`) in the views.
    pub(crate) fn describing(self, descriptions: HashMap<String, String>) -> App {
        App { descriptions, ..self }
    }

    /// The answer to `method path?query`.
    pub(crate) fn respond(&self, method: &str, path: &str, query: &str) -> Response {
        if method != "GET" && method != "HEAD" {
            return Response::error(405, format!("{method} is not served: the dashboard only reads"));
        }
        let segments: Vec<String> =
            path.trim_matches('/').split('/').filter(|s| !s.is_empty()).map(percent_decode).collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        match segments.as_slice() {
            [] => Response { status: 200, content_type: "text/html; charset=utf-8", body: page::render().into_bytes() },
            ["api", "runs"] => self.runs(query),
            ["api", "runs", id] => self.run(id),
            ["api", "runs", id, "tasks", task, "logs"] => self.logs(id, task),
            ["api", "tasks", task, "history"] => self.task(task),
            ["api", "stats"] => self.stats(),
            ["api", "live"] => Response::json(200, &json!({"runs": read_live(&live_dir(&self.state_dir))})),
            _ => Response::error(404, format!("no such page: {path}")),
        }
    }

    fn read<T>(&self, f: impl FnOnce(&History) -> Result<T, HistoryError>) -> Result<T, Response> {
        let history = self.history.lock().expect("history lock");
        f(&history).map_err(|e| Response::error(500, format!("could not read .vx/history.db: {e}")))
    }

    fn runs(&self, query: &str) -> Response {
        let filter = match parse_filter(query) {
            Ok(f) => f,
            Err(message) => return Response::error(400, message),
        };
        match self.read(|h| runs(h, &filter)) {
            Ok(found) => {
                let next = (found.len() == filter.limit).then(|| found.last().map(|r| r["id"].clone())).flatten();
                Response::json(200, &json!({"runs": found, "next_before": next}))
            }
            Err(response) => response,
        }
    }

    fn run(&self, id: &str) -> Response {
        let Ok(id) = id.parse::<i64>() else {
            return Response::error(400, format!("`{id}` is not a run id: ids are numbers, as `vx history` shows"));
        };
        match self.read(|h| recorded_document(h, id)) {
            Ok(Some(mut doc)) => {
                for task in doc["tasks"].as_array_mut().into_iter().flatten() {
                    let described = task["id"].as_str().and_then(|id| self.descriptions.get(id));
                    if let (Some(description), None) = (described, task.get("description")) {
                        task["description"] = json!(description);
                    }
                }
                Response::json(200, &doc)
            }
            Ok(None) => Response::error(404, format!("no run {id} in .vx/history.db")),
            Err(response) => response,
        }
    }

    /// The output of `task`'s failed attempts in run `id`, as history kept it.
    fn logs(&self, id: &str, task: &str) -> Response {
        let Ok(id) = id.parse::<i64>() else {
            return Response::error(400, format!("`{id}` is not a run id: ids are numbers, as `vx history` shows"));
        };
        match self.read(|h| task_logs(h, id, task)) {
            Ok(Some(doc)) => Response::json(200, &doc),
            Ok(None) => Response::error(
                404,
                format!("run {id} kept no log of {task}: it did not fail there, or failed before its command ran"),
            ),
            Err(response) => response,
        }
    }

    fn task(&self, task: &str) -> Response {
        match self.read(|h| task_history(h, task)) {
            Ok(Some(mut doc)) => {
                doc["description"] = json!(self.descriptions.get(task));
                Response::json(200, &doc)
            }
            Ok(None) => Response::error(404, format!("no run of {task} in .vx/history.db")),
            Err(response) => response,
        }
    }

    fn stats(&self) -> Response {
        let mut doc = match self.read(stats) {
            Ok(doc) => doc,
            Err(response) => return response,
        };
        let store = {
            let mut cached = self.store_stats.lock().expect("store stats lock");
            match *cached {
                Some((at, s)) if at.elapsed() < STORE_STATS_FOR => s,
                _ => {
                    let s = self.store.stats();
                    *cached = Some((Instant::now(), s));
                    s
                }
            }
        };
        doc["cache"] = json!({"entries": store.entries, "bytes": store.bytes});
        Response::json(200, &doc)
    }
}

/// The runs list's query: `command`, `tag` (`KEY=VALUE`), `branch`,
/// `outcome` (`ok` or `failed`), `limit` and `before`; empty values are
/// no filter.
pub(crate) fn parse_filter(query: &str) -> Result<RunFilter, String> {
    let mut filter = RunFilter { limit: 50, ..RunFilter::default() };
    const KNOWN: [&str; 6] = ["command", "tag", "branch", "outcome", "limit", "before"];
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        if value.is_empty() && KNOWN.contains(&&*key) {
            continue;
        }
        let value = value.into_owned();
        match &*key {
            "command" => filter.command = Some(value),
            "tag" => {
                let (k, v) = value.split_once('=').ok_or_else(|| format!("tag `{value}` is not KEY=VALUE"))?;
                filter.tag = Some((k.to_string(), v.to_string()));
            }
            "branch" => filter.branch = Some(value),
            "outcome" => {
                filter.ok = Some(match value.as_str() {
                    "ok" => true,
                    "failed" => false,
                    _ => return Err(format!("outcome `{value}` is not `ok` or `failed`")),
                })
            }
            "limit" => {
                filter.limit = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_LIMIT).contains(n))
                    .ok_or_else(|| format!("limit `{value}` is not a number from 1 to {MAX_LIMIT}"))?
            }
            "before" => filter.before = Some(value.parse().map_err(|_| format!("before `{value}` is not a run id"))?),
            _ => return Err(format!("unknown filter `{key}`: use command, tag, branch, outcome, limit or before")),
        }
    }
    Ok(filter)
}

/// `%XX` escapes of a path segment decoded (a task id's `#` is `%23`).
fn percent_decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_and_bad_ones_are_errors() {
        let f = parse_filter("command=build&tag=ci%3D1&branch=main&outcome=failed&limit=5&before=9&x=").unwrap_err();
        assert!(f.contains("unknown filter `x`"), "{f}");
        let f = parse_filter("command=build&tag=ci%3D1&branch=main&outcome=failed&limit=5&before=9&branch=").unwrap();
        assert_eq!(f.command.as_deref(), Some("build"));
        assert_eq!(f.tag, Some(("ci".into(), "1".into())));
        assert_eq!((f.branch.as_deref(), f.ok, f.limit, f.before), (Some("main"), Some(false), 5, Some(9)));
        assert_eq!(parse_filter("").unwrap().limit, 50);
        for bad in ["limit=0", "limit=x", "limit=501", "before=x", "outcome=meh", "tag=novalue"] {
            assert!(parse_filter(bad).is_err(), "{bad}");
        }
        assert_eq!(percent_decode("app%23build"), "app#build");
    }
}
