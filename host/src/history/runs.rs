//! Invocations as `vx history`, `vx last`, `vx info`, `vx cache stats`,
//! `vx why`, plugins and the dashboard's runs list read them: the most
//! recent ones, a filtered page of them, one by id, how many, the hit
//! rate, and a task's last manifest.

use rusqlite::{OptionalExtension, ToSql, params};

use super::rows::{Invocation, InvocationDetail};
use super::store::{History, HistoryError};
use crate::cache::KeyManifest;

/// The filters of the dashboard's runs list; each is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RunFilter {
    /// Part of the command line.
    pub(crate) command: Option<String>,
    /// A tag, `KEY=VALUE`.
    pub(crate) tag: Option<(String, String)>,
    pub(crate) branch: Option<String>,
    /// `Some(true)`: exit code 0 only; `Some(false)`: the others.
    pub(crate) ok: Option<bool>,
    /// Runs older than this id (the next page).
    pub(crate) before: Option<i64>,
    pub(crate) limit: usize,
}

impl RunFilter {
    /// The filter as an SQL condition on `i`, the invocation, with `?2`…
    /// bound to the values returned (`?1` is the limit).
    fn condition(&self) -> (String, Vec<Box<dyn ToSql>>) {
        let mut conditions = vec!["1".to_string()];
        let mut values: Vec<Box<dyn ToSql>> = Vec::new();
        let mut bind = |condition: &str, value: Box<dyn ToSql>| {
            values.push(value);
            conditions.push(condition.replace('?', &format!("?{}", values.len() + 1)));
        };
        if let Some(text) = &self.command {
            bind("instr(i.command, ?) > 0", Box::new(text.clone()));
        }
        if let Some(tag) = &self.tag {
            // Tags are stored as a JSON list of pairs: look for the pair's text.
            let pair = serde_json::to_string(tag).expect("a tag serializes");
            bind("instr(i.tags, ?) > 0", Box::new(pair));
        }
        if let Some(branch) = &self.branch {
            bind("i.branch = ?", Box::new(branch.clone()));
        }
        if let Some(before) = self.before {
            bind("i.id < ?", Box::new(before));
        }
        match self.ok {
            Some(true) => conditions.push("i.exit_code = 0".into()),
            Some(false) => conditions.push("i.exit_code != 0".into()),
            None => {}
        }
        (conditions.join(" AND "), values)
    }
}

fn invocation_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Invocation> {
    let tags: String = row.get(3)?;
    let args: Option<String> = row.get(11)?;
    Ok(Invocation {
        id: row.get(0)?,
        command: row.get(1)?,
        cwd: row.get(2)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        started_ms: row.get(4)?,
        ended_ms: row.get(5)?,
        exit_code: row.get(6)?,
        tasks: row.get(7)?,
        cached: row.get(8)?,
        cpu_ms: row.get(9)?,
        peak_rss_bytes: row.get(10)?,
        detail: InvocationDetail {
            args: args.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default(),
            git_commit: row.get(12)?,
            branch: row.get(13)?,
            env_mode: row.get(14)?,
            wall_ms: row.get(15)?,
        },
    })
}

impl History {
    /// The most recent invocations, newest first.
    pub fn recent(&self, limit: usize) -> Result<Vec<Invocation>, HistoryError> {
        self.invocations("1", &[], limit)
    }

    /// The invocations `filter` keeps, newest first.
    pub(crate) fn runs(&self, filter: &RunFilter) -> Result<Vec<Invocation>, HistoryError> {
        let (condition, values) = filter.condition();
        let refs: Vec<&dyn ToSql> = values.iter().map(|v| v.as_ref()).collect();
        self.invocations(&condition, &refs, filter.limit)
    }

    /// Invocation `id`, when history holds it.
    pub(crate) fn invocation(&self, id: i64) -> Result<Option<Invocation>, HistoryError> {
        Ok(self.invocations("i.id = ?2", &[&id], 1)?.pop())
    }

    /// Invocations matching `filter` (an SQL condition on `i`, the
    /// invocation, with `?2`… bound to `values`), newest first.
    fn invocations(&self, filter: &str, values: &[&dyn ToSql], limit: usize) -> Result<Vec<Invocation>, HistoryError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT i.id, i.command, i.cwd, i.tags, i.started_ms, i.ended_ms, i.exit_code,
                        (SELECT COUNT(*) FROM task_runs t WHERE t.invocation = i.id AND t.status != 'skipped'),
                        (SELECT COUNT(*) FROM task_runs t WHERE t.invocation = i.id AND t.cache IN ('local', 'remote')),
                        (SELECT COALESCE(SUM(cpu_ms), 0) FROM task_runs t WHERE t.invocation = i.id),
                        (SELECT MAX(peak_rss_bytes) FROM task_runs t WHERE t.invocation = i.id),
                        i.args, i.git_commit, i.branch, i.env_mode, i.wall_ms
                 FROM invocations i WHERE {filter} ORDER BY i.id DESC LIMIT ?1"
        ))?;
        let limit = limit as i64;
        let mut bound: Vec<&dyn ToSql> = vec![&limit];
        bound.extend_from_slice(values);
        let rows = stmt.query_map(bound.as_slice(), invocation_row)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(HistoryError::from)
    }

    /// How many invocations history holds.
    pub fn invocation_count(&self) -> Result<i64, HistoryError> {
        self.conn.query_row("SELECT COUNT(*) FROM invocations", [], |r| r.get(0)).map_err(HistoryError::from)
    }

    /// Hits among task runs that looked the cache up, over all history.
    pub fn hit_rate(&self) -> Result<(i64, i64), HistoryError> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FILTER (WHERE cache IN ('local', 'remote')), COUNT(*) FILTER (WHERE cache != 'uncached')
                 FROM task_runs WHERE status != 'skipped'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(HistoryError::from)
    }

    /// The key and manifest of a task's latest recorded run.
    pub fn last_manifest(&self, task: &str) -> Result<Option<(String, KeyManifest)>, HistoryError> {
        let row: Option<(String, String)> = self
            .conn
            .query_row("SELECT key, manifest FROM manifests WHERE task = ?1", params![task], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        Ok(row.and_then(|(key, json)| serde_json::from_str(&json).ok().map(|m| (key, m))))
    }
}
