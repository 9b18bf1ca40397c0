//! JSONC, as turbo reads `turbo.json` and `turbo.jsonc`: JSON with `//`
//! and `/* */` comments and trailing commas. Comments and trailing commas
//! are blanked to spaces (newlines kept) before `serde_json` reads the
//! text, so a syntax error still points at the line and column the user
//! sees in their editor.

/// The text with comments and trailing commas replaced by spaces.
pub fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    // The position of the last comma outside a string, while only
    // whitespace and comments have followed it.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
                for slot in &mut out[i..end] {
                    if *slot != b'\n' {
                        *slot = b' ';
                    }
                }
                i = end;
                continue;
            }
            (b'"', _) => {
                pending_comma = None;
                in_string = true;
            }
            (b',', _) => pending_comma = Some(i),
            (b'}' | b']', _) => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
            }
            (c, _) if c.is_ascii_whitespace() => {}
            _ => pending_comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes were replaced by ASCII spaces, outside multi-byte
    // sequences (those live in strings or comments, whose bytes are all
    // blanked or all kept), so the text stays valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn comments_and_trailing_commas_become_spaces() {
        let text = "{\n  // a comment\n  \"a\": \"x // not a comment\", /* b */\n  \"b\": [1, 2,],\n}\n";
        let stripped = strip(text);
        assert_eq!(stripped.len(), text.len());
        assert_eq!(stripped.lines().count(), text.lines().count());
        let v: serde_json::Value = serde_json::from_str(&stripped).expect("valid JSON after stripping");
        assert_eq!(v["a"], "x // not a comment");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
    }

    #[test]
    fn escaped_quotes_keep_the_string_open() {
        let v: serde_json::Value = serde_json::from_str(&strip(r#"{"a": "say \"hi\" // still", }"#)).expect("valid");
        assert_eq!(v["a"], "say \"hi\" // still");
    }

    #[test]
    fn a_comma_before_a_value_is_kept() {
        assert!(serde_json::from_str::<serde_json::Value>(&strip("[1, /* c */ 2]")).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&strip("[1,, 2]")).is_err());
    }
}
