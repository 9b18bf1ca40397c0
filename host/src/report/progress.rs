//! The status line on a terminal: `[12/50] 2 running: web#build, ui#test ·
//! ETA 8s · api#migrate waiting for mutex db, held by another vx (pid 812)`
//! (the first ready task that waits, and why, with how many more do). It is redrawn below task output — each write clears it first
//! and draws it again after, under the same lock, so it never corrupts a
//! line — and it is never drawn when stdout is not a terminal, under CI, or
//! with `--output-logs none`.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use crate::units::format_duration;

#[derive(Debug, Default)]
pub(crate) struct StatusLine {
    total: usize,
    done: usize,
    running: BTreeSet<String>,
    /// Ready tasks that wait for cpus, memory or a mutex, with the reason.
    waiting: std::collections::BTreeMap<String, String>,
    /// p50 durations by task id, from history.
    p50: HashMap<String, Duration>,
    /// Expected work not yet finished, and the tasks without a p50.
    pending: Duration,
    concurrency: usize,
    width: usize,
    /// Once the run is over the line is gone for good.
    hidden: bool,
}

impl StatusLine {
    pub(crate) fn new(total: usize, p50: HashMap<String, Duration>, concurrency: usize) -> StatusLine {
        let pending = p50.values().sum();
        let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(100);
        StatusLine { total, p50, pending, concurrency: concurrency.max(1), width, ..StatusLine::default() }
    }

    pub(crate) fn start(&mut self, id: &str) {
        self.waiting.remove(id);
        self.running.insert(id.to_string());
    }

    /// A ready task waits (`Some(why)`) or no longer does.
    pub(crate) fn waiting(&mut self, id: &str, reason: Option<&str>) {
        match reason {
            Some(why) => self.waiting.insert(id.to_string(), why.to_string()),
            None => self.waiting.remove(id),
        };
    }

    pub(crate) fn finish(&mut self, id: &str) {
        self.waiting.remove(id);
        if self.running.remove(id) || self.done < self.total {
            self.done += 1;
        }
        if let Some(d) = self.p50.get(id) {
            self.pending = self.pending.saturating_sub(*d);
        }
    }

    pub(crate) fn hide(&mut self) {
        self.hidden = true;
    }

    /// The line as shown (no newline), cut to the terminal's width.
    pub(crate) fn render(&self) -> String {
        if self.hidden {
            return String::new();
        }
        let mut text = format!("[{}/{}]", self.done.min(self.total), self.total);
        if !self.running.is_empty() {
            let names: Vec<&str> = self.running.iter().take(3).map(String::as_str).collect();
            let more = self.running.len().saturating_sub(3);
            text.push_str(&format!(" {} running: {}", self.running.len(), names.join(", ")));
            if more > 0 {
                text.push_str(&format!(" +{more}"));
            }
        }
        if !self.pending.is_zero() {
            text.push_str(&format!(" · ETA {}", format_duration(self.pending / self.concurrency as u32)));
        }
        if let Some((id, why)) = self.waiting.iter().next() {
            text.push_str(&format!(" · {id} {why}"));
            if self.waiting.len() > 1 {
                text.push_str(&format!(" (+{} waiting)", self.waiting.len() - 1));
            }
        }
        text.chars().take(self.width.saturating_sub(1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_estimates() {
        let p50 =
            HashMap::from([("a#b".to_string(), Duration::from_secs(4)), ("c#d".to_string(), Duration::from_secs(2))]);
        let mut line = StatusLine::new(3, p50, 2);
        assert_eq!(line.render(), "[0/3] · ETA 3.00s");
        line.start("a#b");
        assert_eq!(line.render(), "[0/3] 1 running: a#b · ETA 3.00s");
        line.finish("a#b");
        assert_eq!(line.render(), "[1/3] · ETA 1.00s");
    }

    #[test]
    fn shows_why_a_ready_task_waits() {
        let mut line = StatusLine::new(3, HashMap::new(), 1);
        line.start("a#b");
        line.waiting("c#d", Some("waiting for mutex db, held by a#b"));
        line.waiting("e#f", Some("waiting for cpus: needs 1, 0 of 1 free"));
        assert_eq!(line.render(), "[0/3] 1 running: a#b · c#d waiting for mutex db, held by a#b (+1 waiting)");
        line.finish("a#b");
        line.start("c#d");
        line.waiting("e#f", None);
        assert_eq!(line.render(), "[1/3] 1 running: c#d");
    }
}
