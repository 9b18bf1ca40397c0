//! Keys from the terminal, read by a thread of their own and decoded here.
//!
//! Not crossterm's event reader: on a terminal that hangs up (its window
//! closed, tmux killed) that reader spins on the end of its input and
//! never returns, which would keep vx from ever ending. A blocking
//! `read(2)` of stdin returns 0 or fails instead, and this reader then
//! ends, which the UI sees as the terminal gone. In raw mode the bytes
//! are what the terminal sends: characters, control bytes and the escape
//! sequences of xterm-like terminals, decoded into crossterm's key type.

use std::io::Read;
use std::sync::mpsc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Reads stdin until it ends, sending each key; the channel closes when
/// the terminal is gone (or the UI stopped listening).
pub(crate) fn spawn_reader(keys: mpsc::Sender<KeyEvent>) -> std::io::Result<()> {
    std::thread::Builder::new().name("vx-tui-keys".into()).spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 1024];
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            for key in decode(&buf[..n]) {
                if keys.send(key).is_err() {
                    return;
                }
            }
        }
    })?;
    Ok(())
}

/// The keys in one read of a raw terminal. An escape byte alone is Esc;
/// followed by `[` or `O` it starts a sequence (arrows, Home, End, Page
/// Up and Down, Delete); an unknown sequence is dropped whole.
pub(crate) fn decode(bytes: &[u8]) -> Vec<KeyEvent> {
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let mut keys = Vec::new();
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let event = match c {
            '\x1b' => match chars.peek() {
                Some('[' | 'O') => {
                    chars.next();
                    let mut seq = String::new();
                    while let Some(&c) = chars.peek() {
                        chars.next();
                        seq.push(c);
                        if c.is_ascii_alphabetic() || c == '~' {
                            break;
                        }
                    }
                    match sequence(&seq) {
                        Some(code) => key(code),
                        None => continue,
                    }
                }
                _ => key(KeyCode::Esc),
            },
            '\r' | '\n' => key(KeyCode::Enter),
            '\t' => key(KeyCode::Tab),
            '\x7f' | '\x08' => key(KeyCode::Backspace),
            c @ '\x01'..='\x1a' => KeyEvent::new(KeyCode::Char((b'a' + c as u8 - 1) as char), KeyModifiers::CONTROL),
            c if c.is_control() => continue,
            c => key(KeyCode::Char(c)),
        };
        keys.push(event);
    }
    keys
}

/// The key of the escape sequence after `ESC [` (or `ESC O`).
fn sequence(seq: &str) -> Option<KeyCode> {
    Some(match seq {
        "A" => KeyCode::Up,
        "B" => KeyCode::Down,
        "C" => KeyCode::Right,
        "D" => KeyCode::Left,
        "H" | "1~" | "7~" => KeyCode::Home,
        "F" | "4~" | "8~" => KeyCode::End,
        "5~" => KeyCode::PageUp,
        "6~" => KeyCode::PageDown,
        "3~" => KeyCode::Delete,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(bytes: &[u8]) -> Vec<(KeyCode, KeyModifiers)> {
        decode(bytes).into_iter().map(|k| (k.code, k.modifiers)).collect()
    }

    #[test]
    fn bytes_of_a_raw_terminal_become_keys() {
        let none = KeyModifiers::NONE;
        assert_eq!(codes(b"ab\r"), [(KeyCode::Char('a'), none), (KeyCode::Char('b'), none), (KeyCode::Enter, none)]);
        assert_eq!(codes(b"\x1b[A\x1b[5~\x1bOF"), [(KeyCode::Up, none), (KeyCode::PageUp, none), (KeyCode::End, none)]);
        assert_eq!(codes(b"\x1b"), [(KeyCode::Esc, none)]);
        assert_eq!(codes(b"\x03\x7f"), [(KeyCode::Char('c'), KeyModifiers::CONTROL), (KeyCode::Backspace, none)]);
        assert_eq!(codes("é".as_bytes()), [(KeyCode::Char('é'), none)]);
        assert_eq!(codes(b"\x00\x1c"), [], "control bytes that are no key are dropped");
        assert_eq!(codes(b"\x1b[99;5Zx"), [(KeyCode::Char('x'), none)], "an unknown sequence is dropped whole");
    }
}
