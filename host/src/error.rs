//! Errors that reach the user.
//!
//! Every error vx prints is one line on stderr that says what is wrong and
//! how to mend it, and every error carries the exit code of its class
//! (DESIGN §3): 2 for usage and configuration, 1 for a failed run, 130/143
//! for an interrupted one (129 after SIGHUP). Internal failures (I/O the user cannot fix, bugs)
//! are still reported as one line, with exit code 1, never as a panic.

use std::fmt;

/// The class of an error, which fixes its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad flags or arguments: exit 2.
    Usage,
    /// Bad configuration (vx.toml, package.json, workspace layout): exit 2.
    Config,
    /// A task failed: exit 1.
    TaskFailed,
    /// Something outside the user's input went wrong (I/O, git): exit 1.
    Internal,
    /// Stopped by SIGINT: exit 130.
    Interrupted,
    /// Stopped by SIGTERM: exit 143.
    Terminated,
    /// Stopped by SIGHUP (a closed terminal): exit 129.
    HungUp,
}

impl ErrorKind {
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage | ErrorKind::Config => 2,
            ErrorKind::TaskFailed | ErrorKind::Internal => 1,
            ErrorKind::Interrupted => 130,
            ErrorKind::Terminated => 143,
            ErrorKind::HungUp => 129,
        }
    }
}

/// A user-facing error: one line of message plus an optional hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), hint: None }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Usage, message)
    }

    pub fn config(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Config, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Internal, message)
    }

    /// Adds the sentence that tells the user how to mend the error.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Wraps an I/O error with what vx was doing when it happened.
    pub fn io(action: impl fmt::Display, err: std::io::Error) -> Self {
        Error::internal(format!("failed to {action}: {err}"))
    }

    pub fn exit_code(&self) -> u8 {
        self.kind.exit_code()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line whatever a message quotes (DESIGN §3), and a line a
        // terminal can show whatever value it echoes (a 100 kB flag).
        f.write_str(&shorten(&flatten(&self.message)))?;
        if let Some(hint) = &self.hint {
            write!(f, "; {}", shorten(&flatten(hint)))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Longest a message of vx's own gets before its middle is left out.
pub(crate) const MAX_MESSAGE: usize = 2_000;

/// `text` whole up to [`MAX_MESSAGE`] characters; past that its start and
/// its end (where a message says how to mend it), with the number of
/// characters left out between them.
fn shorten(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_MESSAGE {
        return text.to_string();
    }
    let (head, tail) = (MAX_MESSAGE * 3 / 4, MAX_MESSAGE / 4);
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}… ({} characters left out) …{end}", count - head - tail)
}

/// Longest a piece of outside text gets in a message of [`one_line`].
pub(crate) const MAX_LINE_TEXT: usize = 500;

/// Outside text (a plugin's reply, a server's digest, a lockfile's value)
/// made fit for a one-line message: every run of control characters
/// (newlines, carriage returns, escapes) becomes one space, and past
/// [`MAX_LINE_TEXT`] characters it is cut with an ellipsis. Fuzzing found
/// such text in errors from plugins, lockfiles, archives and REAPI replies.
pub(crate) fn one_line(text: &str) -> String {
    cut(text, MAX_LINE_TEXT)
}

/// [`one_line`] without the cut, for vx's own messages.
pub(crate) fn flatten(text: &str) -> String {
    cut(text, usize::MAX)
}

fn cut(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max));
    let mut chars = 0;
    let mut in_control = false;
    for c in text.chars() {
        if chars == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            if !in_control {
                out.push(' ');
                chars += 1;
            }
            in_control = true;
            continue;
        }
        in_control = false;
        out.push(c);
        chars += 1;
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_text_becomes_one_line_and_is_cut() {
        assert_eq!(one_line("a\r\n\tb\x1b[0m c"), "a b [0m c");
        assert_eq!(one_line("\n"), "");
        assert_eq!(one_line(&"é".repeat(600)).chars().count(), MAX_LINE_TEXT + 1);
        let e = Error::config("bad `x\ny`").with_hint("mend\rit");
        assert_eq!(e.to_string(), "bad `x y`; mend it");
    }

    #[test]
    fn a_huge_message_keeps_its_start_and_its_end() {
        let e = Error::usage(format!("bad value `{}`, expected a number", "a".repeat(100_000))).with_hint("see --help");
        let text = e.to_string();
        assert!(text.chars().count() < MAX_MESSAGE + 100, "{} characters", text.chars().count());
        assert!(text.starts_with("bad value `aaa"), "{text}");
        assert!(text.ends_with("aaa`, expected a number; see --help"), "{text}");
        assert!(text.contains("(98031 characters left out)"), "{text}");
    }
}
