//! Persistent tasks (servers): when one counts as ready, and how the
//! engine tells it to stop. A server is ready when its `ready` rule holds
//! (a log line matches, a port accepts, a path exists) or, with no rule,
//! as soon as it starts; readiness releases its dependents and frees its
//! concurrency slot.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, mpsc};

use crate::config::Ready;

/// How often a `port` or `path` readiness check is made.
pub(crate) const READY_POLL: Duration = Duration::from_millis(50);
/// Lines kept to explain a persistent task that died before it was ready.
const TAIL_LINES: usize = 10;

/// What makes a task persistent: its readiness rule and how vx stops it.
#[derive(Debug)]
pub(crate) struct Persistence {
    pub ready: Option<Ready>,
    pub ready_timeout: Option<Duration>,
    /// The project directory, for `ready = { path = … }`.
    pub dir: PathBuf,
    /// Tells the engine the task is ready (its node index).
    pub ready_tx: mpsc::UnboundedSender<usize>,
    /// Set by the engine when nothing needs the task any more.
    pub stop: Arc<Notify>,
}

/// Readiness as one attempt tracks it.
#[derive(Debug)]
pub(crate) struct Readiness<'a> {
    persistence: Option<&'a Persistence>,
    node: usize,
    pub ready: bool,
    /// The last lines before readiness, to explain an early exit.
    pub tail: VecDeque<String>,
}

impl<'a> Readiness<'a> {
    /// A task that is not persistent counts as ready from the start; a
    /// server without a rule is ready as soon as it starts.
    pub(crate) fn new(persistence: Option<&'a Persistence>, node: usize) -> Readiness<'a> {
        let mut r = Readiness { persistence, node, ready: persistence.is_none(), tail: VecDeque::new() };
        if persistence.is_some_and(|p| p.ready.is_none()) {
            r.mark_ready();
        }
        r
    }

    pub(crate) fn rule(&self) -> Option<&'a Ready> {
        self.persistence.and_then(|p| p.ready.as_ref())
    }

    /// Whether the rule is one that is checked by polling.
    pub(crate) fn polls(&self) -> bool {
        matches!(self.rule(), Some(Ready::Port(_) | Ready::Path(_)))
    }

    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.persistence.and_then(|p| p.ready_timeout)
    }

    pub(crate) fn mark_ready(&mut self) {
        if !self.ready {
            self.ready = true;
            if let Some(p) = self.persistence {
                let _ = p.ready_tx.send(self.node);
            }
        }
    }

    /// Looks at one line of output before readiness.
    pub(crate) fn saw_line(&mut self, line: &[u8]) {
        if self.ready {
            return;
        }
        let text = String::from_utf8_lossy(line);
        if let Some(Ready::Log(re)) = self.rule()
            && re.is_match(&text)
        {
            self.mark_ready();
        }
        self.keep_in_tail(line);
    }

    /// Keeps a line in the tail only (no rule is checked): for lines read
    /// after the leader exited, since a process that is gone cannot become
    /// ready any more.
    pub(crate) fn keep_in_tail(&mut self, line: &[u8]) {
        if !self.ready {
            if self.tail.len() == TAIL_LINES {
                self.tail.pop_front();
            }
            self.tail.push_back(String::from_utf8_lossy(line).trim_end().to_string());
        }
    }

    /// Checks a `port` or `path` rule now.
    pub(crate) async fn poll(&mut self) {
        if !self.ready && check_ready(self.rule(), self.persistence.map(|p| &p.dir)).await {
            self.mark_ready();
        }
    }
}

/// Whether a `port` or `path` readiness rule holds now.
async fn check_ready(rule: Option<&Ready>, dir: Option<&PathBuf>) -> bool {
    match (rule, dir) {
        (Some(Ready::Port(port)), _) => tokio::net::TcpStream::connect(("127.0.0.1", *port)).await.is_ok(),
        (Some(Ready::Path(path)), Some(dir)) => dir.join(path).exists(),
        _ => false,
    }
}
