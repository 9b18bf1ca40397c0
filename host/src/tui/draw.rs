//! Drawing the terminal UI from its state: a header with the progress and
//! ETA, the task list on the left (status, time, ETA), the selected task's
//! log on the right, and a footer with the keys, the search being typed,
//! the input mode or the last message.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, List, ListItem, ListState, Paragraph};

use super::state::{Done, Mode, Phase, Row, State};
use crate::units::format_duration;

/// The footer's key help in normal mode.
const KEYS: &str = "↑↓ select · PgUp/PgDn scroll · / search · p pin · i input · r restart · q/Ctrl-C stop";

pub(crate) fn draw(frame: &mut Frame<'_>, state: &State, title: &str) {
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(1)]).areas(frame.area());
    let progress = state.progress.render();
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {title} "), Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)),
            Span::raw(format!(" {progress}")),
        ])),
        header,
    );
    let widest = state.rows.iter().map(|r| r.id.chars().count()).max().unwrap_or(10);
    let list_width = (widest as u16 + 18).clamp(24, body.width / 2);
    let [list, log] = Layout::horizontal([Constraint::Length(list_width), Constraint::Min(10)]).areas(body);
    draw_list(frame, state, list);
    draw_log(frame, state, log);
    frame.render_widget(Paragraph::new(footer_line(state)), footer);
}

fn draw_list(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let shown = state.shown();
    let current = state.current();
    let items: Vec<ListItem<'_>> = shown.iter().map(|&i| ListItem::new(row_line(&state.rows[i]))).collect();
    let title = if state.search.is_empty() {
        format!(" Tasks ({}) ", state.rows.len())
    } else {
        format!(" Tasks matching \"{}\" ({}) ", state.search, shown.len())
    };
    let pin = if state.pinned.is_some() { " pinned " } else { "" };
    let list = List::new(items)
        .block(Block::default().borders(Borders::ALL).title(title).title_bottom(pin))
        .highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("›");
    let mut list_state = ListState::default().with_selected(current.and_then(|c| shown.iter().position(|&i| i == c)));
    frame.render_stateful_widget(list, area, &mut list_state);
}

/// A task's line in the list: its status mark, id and time.
fn row_line(row: &Row) -> Line<'_> {
    let (mark, color) = match &row.phase {
        Phase::Waiting => ("·", Color::DarkGray),
        Phase::Running => ("▶", Color::Yellow),
        Phase::Serving => ("●", Color::Cyan),
        Phase::Done(Done::Ok) => ("✓", Color::Green),
        Phase::Done(Done::Cached) => ("✓", Color::Blue),
        Phase::Done(Done::Failed) => ("✗", Color::Red),
        Phase::Done(Done::Skipped) => ("-", Color::DarkGray),
        Phase::Done(Done::Stopped) => ("■", Color::Magenta),
    };
    Line::from(vec![
        Span::styled(format!("{mark} "), Style::new().fg(color)),
        Span::raw(row.id.clone()),
        Span::styled(format!(" {}", time_text(row)), Style::new().fg(Color::DarkGray)),
    ])
}

/// `1.2s/~3.0s` while running (with the p50 from history), the time it
/// took once done, `cached`, `ready` for a serving task.
fn time_text(row: &Row) -> String {
    let eta = |p50: Option<Duration>| p50.map(|p| format!("/~{}", format_duration(p))).unwrap_or_default();
    match &row.phase {
        Phase::Waiting if row.waiting.is_some() => "waits".to_string(),
        Phase::Waiting => row.p50.map(|p| format!("~{}", format_duration(p))).unwrap_or_default(),
        Phase::Running => {
            let elapsed = row.started.map(|s| s.elapsed()).unwrap_or_default();
            format!("{}{}", format_duration(elapsed), eta(row.p50))
        }
        Phase::Serving => "ready".to_string(),
        Phase::Done(Done::Cached) => "cached".to_string(),
        Phase::Done(Done::Skipped) => "skipped".to_string(),
        Phase::Done(_) => row.took.map(format_duration).unwrap_or_default(),
    }
}

fn draw_log(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let Some(current) = state.current() else {
        frame.render_widget(Block::default().borders(Borders::ALL).title(" Log "), area);
        return;
    };
    let row = &state.rows[current];
    let height = area.height.saturating_sub(2) as usize;
    let end = row.log.len().saturating_sub(state.scroll);
    let start = end.saturating_sub(height);
    let lines: Vec<Line<'_>> = row.log[start..end].iter().map(|l| Line::raw(l.as_str())).collect();
    let mut title = format!(" {} ", row.id);
    if state.scroll > 0 {
        title.push_str(&format!("(scrolled up {} lines) ", state.scroll));
    }
    if row.interactive {
        title.push_str("· interactive ");
    }
    if let (Phase::Waiting, Some(why)) = (&row.phase, &row.waiting) {
        title.push_str(&format!("· {why} "));
    }
    let typing = matches!(&state.mode, Mode::Input(task) if *task == row.id);
    let border = if typing { Style::new().fg(Color::Yellow) } else { Style::new() };
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).border_style(border).title(title)),
        area,
    );
}

fn footer_line(state: &State) -> Line<'_> {
    match &state.mode {
        Mode::Search => Line::from(vec![
            Span::styled(" search: ", Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(format!("{}▏", state.search)),
            Span::styled("  Enter keep · Esc clear", Style::new().fg(Color::DarkGray)),
        ]),
        Mode::Input(task) => Line::from(vec![
            Span::styled(format!(" typing into {task} "), Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)),
            Span::styled(" Esc to stop typing · Ctrl-C stops the run", Style::new().fg(Color::DarkGray)),
        ]),
        Mode::Normal => match &state.message {
            Some(message) => Line::styled(format!(" {message}"), Style::new().fg(Color::Yellow)),
            None => Line::styled(format!(" {KEYS}"), Style::new().fg(Color::DarkGray)),
        },
    }
}
