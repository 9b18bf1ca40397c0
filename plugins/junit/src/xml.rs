//! XML 1.0 escaping. Task output is arbitrary bytes turned into text: it may
//! hold `<`, `&`, ANSI colour codes and other control characters, and a
//! single one of those would make the whole report unparseable.

/// Escapes `text` for element content.
pub fn text(text: &str) -> String {
    escape(&strip_ansi(text), false)
}

/// Escapes `value` for a double-quoted attribute. Newlines and tabs become
/// character references, because parsers normalise raw ones to spaces.
pub fn attr(value: &str) -> String {
    escape(&strip_ansi(value), true)
}

fn escape(input: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(input.len());
    for c in input.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\'' if in_attribute => out.push_str("&apos;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            '\r' if in_attribute => out.push_str("&#13;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            c if is_xml_char(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// The XML 1.0 `Char` production; Rust's `char` already excludes surrogates.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Drops ANSI CSI sequences (`ESC [ params final`), i.e. colours and cursor
/// moves, which are noise in a CI report. Other escapes are left for
/// [`escape`] to replace.
fn strip_ansi(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_markup() {
        assert_eq!(text("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(text("it's \"quoted\"\nnext"), "it's \"quoted\"\nnext");
        assert_eq!(text("]]>"), "]]&gt;");
    }

    #[test]
    fn attr_escapes_quotes_and_whitespace() {
        assert_eq!(attr("say \"hi\" & 'bye'"), "say &quot;hi&quot; &amp; &apos;bye&apos;");
        assert_eq!(attr("a\nb\tc\r"), "a&#10;b&#9;c&#13;");
    }

    #[test]
    fn colour_codes_are_dropped() {
        assert_eq!(text("\u{1b}[1;31merror\u{1b}[0m: x"), "error: x");
    }

    #[test]
    fn characters_xml_cannot_hold_are_replaced() {
        assert_eq!(text("nul\0 bell\u{7} esc\u{1b}x \u{FFFE}"), "nul\u{FFFD} bell\u{FFFD} esc\u{FFFD}x \u{FFFD}");
        assert_eq!(text("ünïcødé 🎉"), "ünïcødé 🎉");
    }
}
