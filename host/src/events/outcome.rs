//! The outcome of a task and of a run, as events carry them: a task's
//! status, where its result came from, how many attempts it took (a task
//! that failed and then passed is flaky), and the summary of the walk. How
//! they look is `report`'s business.

use std::time::{Duration, Instant};

use crate::error::ErrorKind;
use crate::guard::Usage;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStatus {
    Succeeded,
    /// Exit code, or the signal that ended it.
    Failed(String),
    TimedOut(Duration),
    /// Stopped because vx was interrupted.
    Cancelled,
    /// Did not run; the reason is a sentence fragment.
    Skipped(String),
}

impl TaskStatus {
    /// The status as one word, the same in history, run summaries and
    /// profiles: `ok`, `failed`, `timed-out`, `cancelled`, `skipped`.
    pub fn word(&self) -> &'static str {
        match self {
            TaskStatus::Succeeded => "ok",
            TaskStatus::Failed(_) => "failed",
            TaskStatus::TimedOut(_) => "timed-out",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Skipped(_) => "skipped",
        }
    }

    /// A [`word`](Self::word) back as a status, its reason or limit left
    /// empty (they are kept apart); an unknown word reads as `failed`.
    pub fn from_word(word: &str) -> TaskStatus {
        match word {
            "ok" => TaskStatus::Succeeded,
            "skipped" => TaskStatus::Skipped(String::new()),
            "cancelled" => TaskStatus::Cancelled,
            "timed-out" => TaskStatus::TimedOut(Duration::ZERO),
            _ => TaskStatus::Failed(String::new()),
        }
    }
}

/// Where a task's result came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheOutcome {
    /// Not cacheable, or the cache is off.
    #[default]
    Uncached,
    /// Looked up, not found (or not read): the task ran.
    Miss,
    /// Restored from the local store.
    Local,
    /// Restored from a remote tier.
    Remote,
    /// A group task: it runs nothing, so there is nothing to cache.
    Group,
}

/// Every spelling of one cache outcome. History, the run summary and the
/// markdown table each spelled outcomes in a match of their own, and they
/// drifted; now each medium reads its column of [`CacheOutcome::spelling`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    /// What `.vx/history.db` stores and reads back: `uncached`, `miss`,
    /// `local`, `remote`, `group`.
    pub stored: &'static str,
    /// The run summary's schema (`--summarize`, the dashboard, live files):
    /// `off`, `miss`, `hit-local`, `hit-remote`; a group runs nothing, so
    /// it is `off` there.
    pub summary: &'static str,
    /// A cell of the markdown report's table.
    pub table: &'static str,
}

impl CacheOutcome {
    pub const ALL: [CacheOutcome; 5] =
        [CacheOutcome::Uncached, CacheOutcome::Miss, CacheOutcome::Local, CacheOutcome::Remote, CacheOutcome::Group];

    pub fn is_hit(self) -> bool {
        matches!(self, CacheOutcome::Local | CacheOutcome::Remote)
    }

    /// The one table of words for this outcome.
    pub fn spelling(self) -> Spelling {
        let (stored, summary, table) = match self {
            CacheOutcome::Uncached => ("uncached", "off", "-"),
            CacheOutcome::Miss => ("miss", "miss", "miss"),
            CacheOutcome::Local => ("local", "hit-local", "hit (local)"),
            CacheOutcome::Remote => ("remote", "hit-remote", "hit (remote)"),
            CacheOutcome::Group => ("group", "off", "group"),
        };
        Spelling { stored, summary, table }
    }

    /// The word history stores.
    pub fn word(self) -> &'static str {
        self.spelling().stored
    }

    /// A stored word back as the outcome; `None` for a word vx never wrote.
    pub fn from_word(word: &str) -> Option<CacheOutcome> {
        CacheOutcome::ALL.into_iter().find(|o| o.word() == word)
    }

    /// The word of the run summary's schema.
    pub fn summary_word(self) -> &'static str {
        self.spelling().summary
    }
}

#[derive(Debug, Clone)]
pub struct TaskResult {
    pub id: String,
    pub status: TaskStatus,
    pub duration: Duration,
    pub cache: CacheOutcome,
    /// The cache key, when one was computed.
    pub key: Option<String>,
    /// The exit code of the task's main process, when it ran and exited.
    pub exit_code: Option<i32>,
    /// The last lines of a failed task's output, for reports; for a flaky
    /// task, of its last failed attempt.
    pub log_tail: Option<String>,
    /// Attempts made: 1, or more when failed attempts were retried.
    pub attempts: u32,
    /// Why the last failed attempt failed (`exit code 1`), when one was
    /// retried.
    pub failed_attempt: Option<String>,
    /// When the task began (after waiting for its lock, as `duration`
    /// counts); `None` for a task that never began.
    pub started: Option<Instant>,
    /// CPU time and peak memory of its process trees, over its attempts,
    /// when its executor could tell (`guard::ExitWatch`).
    pub usage: Option<Usage>,
}

impl TaskResult {
    /// A result for a task that never ran.
    pub fn not_run(id: String, status: TaskStatus) -> TaskResult {
        TaskResult {
            id,
            status,
            duration: Duration::ZERO,
            cache: CacheOutcome::Uncached,
            key: None,
            exit_code: None,
            log_tail: None,
            attempts: 0,
            failed_attempt: None,
            started: None,
            usage: None,
        }
    }

    /// Failed, then passed on a later attempt.
    pub fn is_flaky(&self) -> bool {
        self.status == TaskStatus::Succeeded && self.attempts > 1
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub results: Vec<TaskResult>,
    pub wall: Duration,
}

impl RunSummary {
    fn count(&self, f: impl Fn(&TaskStatus) -> bool) -> usize {
        self.results.iter().filter(|r| f(&r.status)).count()
    }

    pub fn succeeded(&self) -> usize {
        self.count(|s| *s == TaskStatus::Succeeded)
    }

    /// Failed, timed out or cancelled: anything that ran and did not succeed.
    pub fn failed(&self) -> usize {
        self.count(|s| matches!(s, TaskStatus::Failed(_) | TaskStatus::TimedOut(_) | TaskStatus::Cancelled))
    }

    /// Stopped by Ctrl-C or SIGTERM (counted in [`RunSummary::failed`],
    /// which decides the exit code, but shown apart: they did not fail).
    pub fn stopped(&self) -> usize {
        self.count(|s| matches!(s, TaskStatus::Cancelled))
    }

    pub fn skipped(&self) -> usize {
        self.count(|s| matches!(s, TaskStatus::Skipped(_)))
    }

    pub fn ran(&self) -> usize {
        self.results.len() - self.skipped()
    }

    pub fn cached(&self) -> usize {
        self.results.iter().filter(|r| r.cache.is_hit()).count()
    }

    /// Succeeded after one or more failed attempts.
    pub fn flaky(&self) -> usize {
        self.results.iter().filter(|r| r.is_flaky()).count()
    }

    /// The run's exit code: the signal's when one stopped it, 1 when a
    /// task failed, else 0.
    pub fn exit_code(&self, interrupted: Option<ErrorKind>) -> u8 {
        match interrupted {
            Some(kind) => kind.exit_code(),
            None if self.failed() > 0 => ErrorKind::TaskFailed.exit_code(),
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_words_read_back_as_their_outcome_and_status() {
        for outcome in CacheOutcome::ALL {
            assert_eq!(CacheOutcome::from_word(outcome.word()), Some(outcome));
        }
        assert_eq!(CacheOutcome::from_word("hit-local"), None, "a summary word is not a stored one");
        let words: Vec<&str> = CacheOutcome::ALL.iter().map(|o| o.summary_word()).collect();
        assert_eq!(words, ["off", "miss", "hit-local", "hit-remote", "off"]);
        for status in [
            TaskStatus::Succeeded,
            TaskStatus::Failed("exit 1".into()),
            TaskStatus::TimedOut(Duration::from_secs(1)),
            TaskStatus::Cancelled,
            TaskStatus::Skipped("a dependency failed".into()),
        ] {
            assert_eq!(TaskStatus::from_word(status.word()).word(), status.word());
        }
    }
}
