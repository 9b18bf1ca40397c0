//! Task output on the terminal. Each line is written whole, with a
//! `project#task` prefix, under one lock, so lines of parallel tasks never
//! interleave mid-line. `--output-logs` decides which logs are shown and
//! `--log-order` whether lines stream or come grouped per task.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use super::progress::StatusLine;
use super::stderr::warning_line;
use super::style::Style;
use crate::events::output::{BoundedLog, pieces};
use crate::events::{CacheOutcome, Event, Subscriber, TaskStatus};

/// `--output-logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum OutputLogs {
    #[default]
    Full,
    /// Only logs of tasks that ran (cache hits stay quiet).
    NewOnly,
    /// Only logs of failed tasks, shown when they fail.
    ErrorsOnly,
    /// One line per task naming it (and, with the cache, its key).
    HashOnly,
    None,
}

/// `--log-order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum LogOrder {
    #[default]
    Stream,
    Grouped,
}

/// `--log-prefix`: whether each line of a task's output starts with its
/// `project#task` (`task`; `auto`, the default, is the same), or comes as
/// the task printed it (`none`), as Turborepo's flag of that name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum LogPrefix {
    #[default]
    Auto,
    Task,
    None,
}

/// Keys are shown shortened, as git shows commits.
fn short(key: &str) -> &str {
    &key[..key.len().min(16)]
}

/// Where the terminal writes.
#[derive(Debug)]
enum Sink {
    Stdout(std::io::Stdout),
    Stderr(std::io::Stderr),
}

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Stdout(o) => o.write(buf),
            Sink::Stderr(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Stdout(o) => o.flush(),
            Sink::Stderr(e) => e.flush(),
        }
    }
}

/// The terminal sink shared by every running task.
#[derive(Debug)]
pub(crate) struct Terminal {
    pub style: Style,
    logs: OutputLogs,
    order: LogOrder,
    /// Lines held back per task (grouped order, or errors-only), bounded
    /// as a kept log is.
    held: Mutex<HashMap<String, BoundedLog>>,
    /// Standard output, or standard error when stdout carries a report.
    out: Mutex<Sink>,
    /// Under GitHub Actions each task's log is a collapsible `::group::`.
    github: bool,
    /// `--summary`: the slowest tasks and the hit rate after the summary.
    details: bool,
    /// History keeps failed attempts' logs: the summary says how to print them.
    log_hint: bool,
    /// The status line, on a terminal only.
    status: Option<Mutex<StatusLine>>,
    /// `--log-prefix none`: a task's lines come without its id.
    bare: bool,
}

impl Terminal {
    pub(crate) fn new(style: Style, logs: OutputLogs, order: LogOrder) -> Self {
        Terminal {
            style,
            logs,
            order,
            held: Mutex::new(HashMap::new()),
            out: Mutex::new(Sink::Stdout(std::io::stdout())),
            github: false,
            details: false,
            log_hint: false,
            status: None,
            bare: false,
        }
    }

    /// Writes to standard error, without a status line: standard output
    /// carries a machine-readable report (`--verify=inputs --format json`).
    pub(crate) fn on_stderr(mut self) -> Self {
        self.out = Mutex::new(Sink::Stderr(std::io::stderr()));
        self.status = None;
        self
    }

    /// Says after the summary how to print a failed attempt's full log
    /// (history records the run, and keeps them).
    pub(crate) fn with_log_hint(mut self, on: bool) -> Self {
        self.log_hint = on;
        self
    }

    /// Prints `--summary`'s details after the run's summary.
    pub(crate) fn with_details(mut self, on: bool) -> Self {
        self.details = on;
        self
    }

    /// Shows a status line below the output (the caller decides that
    /// stdout is a terminal).
    pub(crate) fn with_status(mut self, status: Option<StatusLine>) -> Self {
        self.status = status.filter(|_| self.logs != OutputLogs::None && !self.github).map(Mutex::new);
        self
    }

    fn update_status(&self, f: impl FnOnce(&mut StatusLine)) {
        if let Some(status) = &self.status {
            f(&mut status.lock().expect("status lock poisoned"));
            self.write(b"");
        }
    }

    /// Groups each task's log for GitHub Actions (which needs whole blocks,
    /// so lines are held per task as with `--log-order grouped`).
    pub(crate) fn with_github_groups(mut self, on: bool) -> Self {
        self.github = on;
        if on {
            self.order = LogOrder::Grouped;
        }
        self
    }

    /// `--log-prefix`: `none` leaves a task's own lines as it printed
    /// them (vx's notes about the task keep the id).
    pub(crate) fn with_prefix(mut self, prefix: LogPrefix) -> Self {
        self.bare = prefix == LogPrefix::None;
        self
    }

    fn holds(&self) -> bool {
        self.order == LogOrder::Grouped || self.logs == OutputLogs::ErrorsOnly
    }

    fn streams(&self) -> bool {
        matches!(self.logs, OutputLogs::Full | OutputLogs::NewOnly)
    }

    fn prefixed(&self, id: &str, line: &[u8]) -> Vec<u8> {
        let mut buf = Vec::with_capacity(id.len() + line.len() + 4);
        buf.extend_from_slice(self.style.prefix(id).as_bytes());
        buf.extend_from_slice(b": ");
        buf.extend_from_slice(line);
        if !line.ends_with(b"\n") {
            buf.push(b'\n');
        }
        buf
    }

    fn write(&self, bytes: &[u8]) {
        let mut out = self.out.lock().expect("terminal lock poisoned");
        let mut buf = Vec::with_capacity(bytes.len() + 64);
        if let Some(status) = &self.status {
            // Clear the status line, write, draw it again below.
            buf.extend_from_slice(b"\r\x1b[2K");
            buf.extend_from_slice(bytes);
            let line = status.lock().expect("status lock poisoned").render();
            if !line.is_empty() {
                buf.extend_from_slice(self.style.dim(&line).as_bytes());
            }
        } else {
            buf.extend_from_slice(bytes);
        }
        // A closed stdout (e.g. piped into `head`) must not stop the run.
        let _ = out.write_all(&buf).and_then(|()| out.flush());
    }

    /// A task started running (a cache miss when it has a key).
    fn started(&self, id: &str, key: Option<&str>) {
        self.update_status(|s| s.start(id));
        if self.logs == OutputLogs::HashOnly {
            let text = match key {
                Some(k) => format!("cache miss, executing {}", short(k)),
                None => "executing".to_string(),
            };
            self.write(&self.prefixed(id, self.style.dim(&text).as_bytes()));
        }
    }

    /// A task's result came from the cache: say so and replay its log as
    /// `--output-logs` asks (its `finished` follows).
    fn cached(&self, id: &str, key: &str, log: &[u8]) {
        let (note, replay) = match self.logs {
            OutputLogs::Full => (Some("cache hit, replaying logs"), true),
            OutputLogs::NewOnly => (Some("cache hit, suppressing logs"), false),
            OutputLogs::HashOnly => (Some("cache hit"), false),
            OutputLogs::ErrorsOnly | OutputLogs::None => (None, false),
        };
        if let Some(note) = note {
            let text = format!("{note} {}", short(key));
            self.write(&self.prefixed(id, self.style.dim(&text).as_bytes()));
        }
        if replay {
            for piece in pieces(log) {
                self.line(id, piece);
            }
        }
    }

    /// One line of a task's output (with or without its newline).
    fn line(&self, id: &str, line: &[u8]) {
        let shown = |line: &[u8]| {
            if self.bare {
                let mut own = line.to_vec();
                if !own.ends_with(b"\n") {
                    own.push(b'\n');
                }
                own
            } else {
                self.prefixed(id, line)
            }
        };
        if self.holds() && self.logs != OutputLogs::None && self.logs != OutputLogs::HashOnly {
            let mut held = self.held.lock().expect("held lock poisoned");
            held.entry(id.to_string()).or_default().push(&shown(line));
        } else if self.streams() {
            self.write(&shown(line));
        }
    }

    /// A message from vx about a task (warnings), always shown.
    fn note(&self, id: &str, message: &str) {
        self.write(&self.prefixed(id, self.style.yellow(message).as_bytes()));
    }

    /// A task ended: release its held lines if its mode says so.
    fn finished(&self, id: &str, success: bool) {
        self.update_status(|s| s.finish(id));
        let held = self.held.lock().expect("held lock poisoned").remove(id);
        if let Some(buf) = held.map(BoundedLog::finish) {
            let show = match self.logs {
                OutputLogs::ErrorsOnly => !success,
                OutputLogs::Full | OutputLogs::NewOnly => true,
                OutputLogs::HashOnly | OutputLogs::None => false,
            };
            if show && self.github {
                let mut block = format!("::group::{id}\n").into_bytes();
                block.extend_from_slice(&buf);
                block.extend_from_slice(b"::endgroup::\n");
                self.write(&block);
            } else if show {
                self.write(&buf);
            }
        }
    }

    /// A group settled: it ran nothing, so one line says why it is done.
    fn group_done(&self, id: &str) {
        self.update_status(|s| s.finish(id));
        if matches!(self.logs, OutputLogs::Full | OutputLogs::NewOnly | OutputLogs::HashOnly) {
            self.write(&self.prefixed(id, self.style.dim("group: its dependencies succeeded").as_bytes()));
        }
    }

    /// Text from vx itself (the summary).
    fn print(&self, text: &str) {
        self.write(text.as_bytes());
    }

    /// Removes the status line for good (the run is over).
    fn clear_status(&self) {
        self.update_status(StatusLine::hide);
    }
}

impl Subscriber for Terminal {
    fn on(&self, event: &Event<'_>) {
        match *event {
            Event::Started { task, key, .. } => self.started(task, key),
            Event::Output { task, line } => self.line(task, line),
            Event::CacheHit { task, key, log, .. } => self.cached(task, key, log),
            Event::TaskNote { task, message } => self.note(task, message),
            Event::Waiting { task, reason } => self.update_status(|s| s.waiting(task, reason)),
            Event::Finished { result, .. } if result.cache == CacheOutcome::Group => self.group_done(&result.id),
            Event::Finished { result, .. } => self.finished(&result.id, result.status == TaskStatus::Succeeded),
            Event::Warning { level, source, message } => eprintln!("{}", warning_line(level, source, message)),
            Event::Interrupted { .. } => {
                self.print(&self.style.yellow("vx: stopping tasks (press Ctrl-C again to kill them now)\n"));
            }
            Event::RunFinished { summary, .. } => {
                self.clear_status();
                self.print(&summary.render(self.style));
                if let Some(hint) = summary.log_hint(self.style).filter(|_| self.log_hint) {
                    self.print(&hint);
                }
                if self.details {
                    self.print(&summary.render_details());
                }
            }
            // Steps' times are for profiles, not the terminal, and a failed
            // attempt's output was shown as it was written.
            Event::Planned { .. }
            | Event::CacheMiss { .. }
            | Event::Span { .. }
            | Event::Ready { .. }
            | Event::AttemptFailed { .. } => {}
        }
    }
}
