//! Colour: on for a terminal, off when piped or when `NO_COLOR` is set
//! (any value, per no-color.org); `CLICOLOR_FORCE` forces it on.

use std::io::IsTerminal;

/// Whether stdout should carry ANSI colour.
pub(crate) fn color_enabled() -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    if std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
        return true;
    }
    std::io::stdout().is_terminal()
}

/// A tiny ANSI palette that renders to nothing when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub enabled: bool,
}

const PREFIX_COLORS: [&str; 6] = ["36", "35", "33", "32", "34", "96"];

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    /// A stable colour per task id, so a task's lines are easy to follow.
    pub fn prefix(self, id: &str) -> String {
        let hash = id.bytes().fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        self.paint(PREFIX_COLORS[hash as usize % PREFIX_COLORS.len()], id)
    }

    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
}
