//! What the terminal UI shows, kept up to date from the run's events: each
//! task's status and log, the selection, the search, the log's scroll and
//! the mode the keys are in. Pure data: drawing is `draw`, keys are `keys`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::events::{CacheOutcome, Event, Level, TaskResult, TaskStatus};
use crate::report::StatusLine;

/// Lines of a task's log the UI keeps (the oldest go first).
const KEPT_LINES: usize = 5_000;

/// Where a task is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    Waiting,
    Running,
    /// A persistent task that is ready (its dependents were released).
    Serving,
    Done(Done),
}

/// How a task ended, as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Done {
    Ok,
    Cached,
    Failed,
    Skipped,
    Stopped,
}

#[derive(Debug)]
pub(crate) struct Row {
    pub id: String,
    pub phase: Phase,
    pub started: Option<Instant>,
    /// How long it took, once it is done.
    pub took: Option<Duration>,
    /// The p50 of its recent runs, from history.
    pub p50: Option<Duration>,
    pub log: Vec<String>,
    /// The last line is unfinished (a prompt): the next output goes on it.
    pub open_line: bool,
    pub persistent: bool,
    pub interactive: bool,
    /// Why it is ready and not started (cpus, memory, a mutex).
    pub waiting: Option<String>,
}

/// What the keys do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    Normal,
    /// Typing a search; the list shows the tasks whose id has it.
    Search,
    /// Typing into the selected task's terminal.
    Input(String),
}

#[derive(Debug)]
pub(crate) struct State {
    pub rows: Vec<Row>,
    index: HashMap<String, usize>,
    /// The selected row's place in the shown list, or (pinned) the task.
    pub selected: usize,
    pub pinned: Option<String>,
    /// Lines scrolled up from the log's end (0 follows it).
    pub scroll: usize,
    pub search: String,
    pub mode: Mode,
    /// One line for the footer: a warning, or why a key did nothing.
    pub message: Option<String>,
    pub progress: StatusLine,
    pub finished: bool,
    pub interrupted: bool,
}

impl State {
    /// The state for a plan whose tasks are `planned` (each with its p50
    /// and whether it is persistent or interactive).
    pub(crate) fn new(planned: Vec<(String, Option<Duration>, bool, bool)>, concurrency: usize) -> State {
        let p50 = planned.iter().filter_map(|(id, p, ..)| Some((id.clone(), (*p)?))).collect();
        let progress = StatusLine::new(planned.len(), p50, concurrency);
        let rows: Vec<Row> = planned
            .into_iter()
            .map(|(id, p50, persistent, interactive)| Row {
                id,
                phase: Phase::Waiting,
                started: None,
                took: None,
                p50,
                log: Vec::new(),
                open_line: false,
                persistent,
                interactive,
                waiting: None,
            })
            .collect();
        let index = rows.iter().enumerate().map(|(i, r)| (r.id.clone(), i)).collect();
        State {
            rows,
            index,
            selected: 0,
            pinned: None,
            scroll: 0,
            search: String::new(),
            mode: Mode::Normal,
            message: None,
            progress,
            finished: false,
            interrupted: false,
        }
    }

    /// Applies one event of the run.
    pub(crate) fn apply(&mut self, event: &Event<'_>) {
        match event {
            Event::Started { task, .. } => {
                self.progress.start(task);
                if let Some(row) = self.row_mut(task) {
                    row.waiting = None;
                    row.phase = Phase::Running;
                    row.started = Some(Instant::now());
                    row.took = None;
                }
            }
            Event::Output { task, line } => {
                if let Some(row) = self.row_mut(task) {
                    push_output(row, line);
                }
            }
            Event::CacheHit { task, log, .. } => {
                if let Some(row) = self.row_mut(task) {
                    for line in log.split_inclusive(|&b| b == b'\n') {
                        push_output(row, line);
                    }
                }
            }
            Event::TaskNote { task, message } => {
                if let Some(row) = self.row_mut(task) {
                    close_line(row);
                    push_line(row, format!("vx: {message}"));
                }
            }
            Event::Waiting { task, reason } => {
                self.progress.waiting(task, *reason);
                if let Some(row) = self.row_mut(task) {
                    row.waiting = reason.map(str::to_string);
                }
            }
            Event::Ready { task } => {
                if let Some(row) = self.row_mut(task).filter(|r| r.phase == Phase::Running) {
                    row.phase = Phase::Serving;
                }
            }
            Event::Finished { result, .. } => self.finish(result),
            Event::Warning { level, message, .. } if *level >= Level::Warning => {
                self.message = Some(format!("vx: {}", crate::error::one_line(message)));
            }
            Event::Interrupted { .. } => {
                self.interrupted = true;
                self.message = Some("stopping every task…".to_string());
            }
            Event::RunFinished { .. } => self.finished = true,
            _ => {}
        }
    }

    fn finish(&mut self, result: &TaskResult) {
        self.progress.finish(&result.id);
        let Some(row) = self.row_mut(&result.id) else { return };
        close_line(row);
        row.took = Some(result.duration);
        row.phase = Phase::Done(match &result.status {
            TaskStatus::Succeeded if result.cache.is_hit() => Done::Cached,
            TaskStatus::Succeeded => Done::Ok,
            TaskStatus::Failed(_) | TaskStatus::TimedOut(_) => Done::Failed,
            TaskStatus::Skipped(_) => Done::Skipped,
            TaskStatus::Cancelled => Done::Stopped,
        });
        if let TaskStatus::Failed(why) | TaskStatus::Skipped(why) = &result.status {
            push_line(row, format!("vx: {} ({why})", result.status.word()));
        }
        if result.cache == CacheOutcome::Local || result.cache == CacheOutcome::Remote {
            push_line(row, "vx: restored from the cache".to_string());
        }
    }

    fn row_mut(&mut self, id: &str) -> Option<&mut Row> {
        self.index.get(id).map(|&i| &mut self.rows[i])
    }

    /// The rows the list shows, in order: those matching the search,
    /// running and serving tasks first, then waiting ones, then finished
    /// ones (each group in plan order), so what is happening stays on top.
    pub(crate) fn shown(&self) -> Vec<usize> {
        let rank = |p: &Phase| match p {
            Phase::Running | Phase::Serving => 0,
            Phase::Waiting => 1,
            Phase::Done(_) => 2,
        };
        let needle = self.search.to_lowercase();
        let mut shown: Vec<usize> =
            (0..self.rows.len()).filter(|&i| self.rows[i].id.to_lowercase().contains(&needle)).collect();
        shown.sort_by_key(|&i| rank(&self.rows[i].phase));
        shown
    }

    /// The selected task's row: the pinned task, else the one at the
    /// selected place of the list.
    pub(crate) fn current(&self) -> Option<usize> {
        if let Some(pinned) = &self.pinned {
            return self.index.get(pinned).copied();
        }
        let shown = self.shown();
        shown.get(self.selected.min(shown.len().saturating_sub(1))).copied()
    }

    /// Moves the selection by `delta` rows (unpinning it).
    pub(crate) fn move_by(&mut self, delta: isize) {
        let shown = self.shown();
        if shown.is_empty() {
            return;
        }
        let here = match self.current() {
            Some(row) => shown.iter().position(|&i| i == row).unwrap_or(0),
            None => 0,
        };
        self.pinned = None;
        self.selected = here.saturating_add_signed(delta).min(shown.len() - 1);
        self.scroll = 0;
    }

    /// Selects `row` where the list now shows it (the pinned task stays
    /// selected whatever the list shows).
    pub(crate) fn select_row(&mut self, row: Option<usize>) {
        if self.pinned.is_none()
            && let Some(place) = row.and_then(|r| self.shown().iter().position(|&i| i == r))
        {
            self.selected = place;
        }
    }

    /// Pins the selected task (the selection follows it as the list
    /// reorders), or unpins it.
    pub(crate) fn toggle_pin(&mut self) {
        match self.pinned.take() {
            Some(id) => {
                // Keep the same task selected where it now is.
                if let Some(&row) = self.index.get(&id) {
                    self.selected = self.shown().iter().position(|&i| i == row).unwrap_or(0);
                }
            }
            None => self.pinned = self.current().map(|i| self.rows[i].id.clone()),
        }
    }
}

/// Appends output to a task's log: lines end at `\n`; a carriage return
/// rewrites the line (a progress bar keeps its last state); escape
/// sequences are dropped, since the pane draws plain text.
fn push_output(row: &mut Row, bytes: &[u8]) {
    let text = strip_escapes(&String::from_utf8_lossy(bytes));
    let mut parts = text.split('\n').peekable();
    while let Some(part) = parts.next() {
        // A newline followed this part; a terminal ends lines with CR LF.
        let ended = parts.peek().is_some();
        let part = if ended { part.strip_suffix('\r').unwrap_or(part) } else { part };
        if part.is_empty() && !ended {
            continue;
        }
        let visible = part.rsplit('\r').find(|p| !p.is_empty()).unwrap_or("");
        if row.open_line {
            let last = row.log.last_mut().expect("an open line exists");
            if part.contains('\r') {
                *last = visible.to_string();
            } else {
                last.push_str(visible);
            }
        } else {
            push_line(row, visible.to_string());
        }
        row.open_line = !ended;
    }
}

fn close_line(row: &mut Row) {
    row.open_line = false;
}

fn push_line(row: &mut Row, line: String) {
    if row.log.len() >= KEPT_LINES {
        row.log.drain(..KEPT_LINES / 10);
    }
    row.log.push(line);
}

/// The text without ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ]
/// … BEL/ST`, and two-byte escapes) or other control characters but tab
/// and carriage return.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\n' | '\r' => out.push(c),
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        Row {
            id: "a#b".into(),
            phase: Phase::Waiting,
            started: None,
            took: None,
            p50: None,
            log: Vec::new(),
            open_line: false,
            persistent: false,
            interactive: false,
            waiting: None,
        }
    }

    #[test]
    fn output_makes_lines_a_prompt_stays_open_and_a_carriage_return_rewrites() {
        let mut r = row();
        push_output(&mut r, b"\x1b[32mgreen\x1b[0m line\r\n");
        push_output(&mut r, b"Name? ");
        push_output(&mut r, b"ada\r\n");
        push_output(&mut r, b"10%\r50%\r100%\n");
        push_output(&mut r, b"\x1b]0;title\x07done\n");
        assert_eq!(r.log, ["green line", "Name? ada", "100%", "done"]);
    }

    #[test]
    fn the_list_puts_running_tasks_first_and_a_pin_follows_its_task() {
        let planned = ["a#build", "b#build", "c#dev"].map(|id| (id.to_string(), None, false, false)).to_vec();
        let mut s = State::new(planned, 2);
        assert_eq!(s.shown(), [0, 1, 2]);
        s.move_by(2);
        assert_eq!(s.current(), Some(2));
        s.toggle_pin();
        s.apply(&Event::Started { task: "c#dev", key: None, executor: "local" });
        assert_eq!(s.shown(), [2, 0, 1], "the running task comes first");
        assert_eq!(s.current(), Some(2), "pinned: the selection moved with its task");
        s.toggle_pin();
        s.move_by(1);
        assert_eq!(s.current(), Some(0));
        s.search = "B#".into();
        assert_eq!(s.shown(), [1], "search is case-insensitive on the id");
    }
}
