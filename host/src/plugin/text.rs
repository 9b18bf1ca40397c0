//! Text a plugin hands vx for the user (error values, panic messages, log
//! records, captured stdout and stderr), made safe to print: one line, no
//! control characters, bounded. A plugin is not trusted with the terminal:
//! an error value holding newlines would forge lines that look like vx's own,
//! an escape sequence could rewrite the screen, and a 100 MiB message would
//! end up in the run's output, its report and its history.

/// At most this many characters of one error message are kept.
pub(crate) const MAX_MESSAGE: usize = 1000;

/// `text` as one printable line: control characters (newlines and escape
/// sequences included) are shown escaped, like `\n` or `\u{1b}`, and past
/// `max` characters it is cut with `…`.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max + 8));
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn control_characters_are_escaped_and_long_text_cut() {
        assert_eq!(one_line("plain text, ünïcode", 100), "plain text, ünïcode");
        assert_eq!(one_line("two\nlines\r\n", 100), "two\\nlines\\r\\n");
        assert_eq!(one_line("\u{1b}[2Jcleared", 100), "\\u{1b}[2Jcleared");
        assert_eq!(one_line(&"x".repeat(50), 10), format!("{}…", "x".repeat(10)));
        assert_eq!(one_line("tab\there", 100), "tab\\there");
    }
}
