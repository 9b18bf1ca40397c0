//! What each key does in the terminal UI. Normal mode moves, scrolls,
//! searches, pins, restarts and enters input mode; search mode edits the
//! search; input mode sends what is typed to the selected task's terminal.
//! Ctrl-C stops the run in every mode, as it does without the UI: vx sends
//! itself SIGINT, so the stop goes through the same guard and kill ladder.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::state::{Mode, State};
use crate::run::Controls;

/// Lines a page of scrolling moves.
const PAGE: usize = 10;

/// Applies one key.
pub(crate) fn handle(key: KeyEvent, state: &mut State, controls: &Controls) {
    if key.kind == KeyEventKind::Release {
        return;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        stop();
        return;
    }
    match state.mode.clone() {
        Mode::Normal => normal(key, state, controls),
        Mode::Search => search(key, state),
        Mode::Input(task) => input(key, state, controls, &task),
    }
}

fn normal(key: KeyEvent, state: &mut State, controls: &Controls) {
    state.message = None;
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => state.move_by(-1),
        KeyCode::Down | KeyCode::Char('j') => state.move_by(1),
        KeyCode::Home | KeyCode::Char('g') => state.move_by(isize::MIN / 2),
        KeyCode::End | KeyCode::Char('G') => state.move_by(isize::MAX / 2),
        KeyCode::PageUp | KeyCode::Char('u') => state.scroll = state.scroll.saturating_add(PAGE),
        KeyCode::PageDown | KeyCode::Char('d') => state.scroll = state.scroll.saturating_sub(PAGE),
        KeyCode::Char('/') => {
            let current = state.current();
            state.search.clear();
            state.select_row(current);
            state.mode = Mode::Search;
        }
        KeyCode::Char('p') => state.toggle_pin(),
        KeyCode::Char('i') => {
            let Some(current) = state.current() else { return };
            let id = state.rows[current].id.clone();
            if controls.takes_input(&id) {
                state.mode = Mode::Input(id);
                state.scroll = 0;
            } else if state.rows[current].interactive {
                state.message = Some(format!("{id} is not running: nothing to type into"));
            } else {
                state.message = Some(format!("{id} takes no input: set `interactive = true` on the task"));
            }
        }
        KeyCode::Char('r') => {
            let Some(current) = state.current() else { return };
            let row = &state.rows[current];
            if row.persistent {
                controls.restart(&row.id);
            } else {
                state.message = Some(format!("{} is not persistent: only a server can be restarted", row.id));
            }
        }
        KeyCode::Char('q') => stop(),
        _ => {}
    }
}

fn search(key: KeyEvent, state: &mut State) {
    match key.code {
        KeyCode::Enter => state.mode = Mode::Normal,
        KeyCode::Esc => {
            // The whole list again, with the same task selected.
            let current = state.current();
            state.search.clear();
            state.mode = Mode::Normal;
            state.select_row(current);
        }
        KeyCode::Backspace | KeyCode::Char(_) => {
            match key.code {
                KeyCode::Char(c) => state.search.push(c),
                _ => drop(state.search.pop()),
            }
            // The selection starts again at the top of what now matches.
            state.selected = 0;
            state.pinned = None;
        }
        _ => {}
    }
}

fn input(key: KeyEvent, state: &mut State, controls: &Controls, task: &str) {
    if key.code == KeyCode::Esc {
        state.mode = Mode::Normal;
        return;
    }
    let Some(bytes) = key_bytes(key) else { return };
    if let Err(why) = controls.type_into(task, &bytes) {
        state.mode = Mode::Normal;
        state.message = Some(why);
    }
}

/// What a terminal sends for `key`: the character, Enter as a carriage
/// return (the pty's line discipline makes it a newline), Backspace as
/// DEL, Tab, arrows as their escape sequences, Ctrl-letter as its control
/// byte (Ctrl-D ends the task's input).
fn key_bytes(key: KeyEvent) -> Option<Vec<u8>> {
    Some(match key.code {
        KeyCode::Char(c) if key.modifiers.contains(KeyModifiers::CONTROL) && c.is_ascii_alphabetic() => {
            vec![(c.to_ascii_lowercase() as u8) & 0x1f]
        }
        KeyCode::Char(c) => c.to_string().into_bytes(),
        KeyCode::Enter => b"\r".to_vec(),
        KeyCode::Backspace => vec![0x7f],
        KeyCode::Tab => b"\t".to_vec(),
        KeyCode::Up => b"\x1b[A".to_vec(),
        KeyCode::Down => b"\x1b[B".to_vec(),
        KeyCode::Right => b"\x1b[C".to_vec(),
        KeyCode::Left => b"\x1b[D".to_vec(),
        _ => return None,
    })
}

/// Stops the run the way Ctrl-C on a terminal without the UI does: the
/// UI holds the terminal in raw mode, so the key arrives here instead of
/// as a signal, and vx raises the signal itself.
fn stop() {
    let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGINT);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_the_bytes_a_terminal_sends() {
        let key = |code, modifiers| KeyEvent::new(code, modifiers);
        assert_eq!(key_bytes(key(KeyCode::Char('a'), KeyModifiers::NONE)), Some(b"a".to_vec()));
        assert_eq!(key_bytes(key(KeyCode::Char('d'), KeyModifiers::CONTROL)), Some(vec![4]));
        assert_eq!(key_bytes(key(KeyCode::Enter, KeyModifiers::NONE)), Some(b"\r".to_vec()));
        assert_eq!(key_bytes(key(KeyCode::Char('é'), KeyModifiers::NONE)), Some("é".as_bytes().to_vec()));
        assert_eq!(key_bytes(key(KeyCode::F(1), KeyModifiers::NONE)), None);
    }
}
