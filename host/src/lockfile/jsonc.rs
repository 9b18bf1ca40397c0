//! JSON with comments and trailing commas, as bun writes `bun.lock` and
//! turbo reads `turbo.json` (`vx init` uses it too).
//!
//! Rather than a second JSON parser, the text is rewritten in place so that
//! serde_json can read it: comments and trailing commas become spaces. A
//! byte is only ever replaced by a space (newlines kept), so every line and
//! column serde_json reports is the original file's. One linear pass for
//! comments, one for commas; strings are skipped with their escapes.

/// The text with comments and trailing commas blanked out.
pub(crate) fn to_json(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    blank_comments(&mut bytes);
    blank_trailing_commas(&mut bytes);
    // Only ASCII bytes and whole multi-byte characters (inside comments)
    // were replaced, each byte by a space, so the text is still UTF-8.
    String::from_utf8(bytes).expect("blanking bytes to spaces keeps UTF-8")
}

fn blank_comments(b: &mut [u8]) {
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'"', _) => i = skip_string(b, i),
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    b[i] = b' ';
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                // An unterminated comment is left in place so serde_json
                // reports it where it starts.
                let Some(p) = b[i + 2..].windows(2).position(|w| w == b"*/") else {
                    return;
                };
                let end = i + 2 + p + 2;
                for c in &mut b[i..end] {
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
}

fn blank_trailing_commas(b: &mut [u8]) {
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = skip_string(b, i),
            b',' => {
                let next = b[i + 1..].iter().position(|c| !c.is_ascii_whitespace());
                if next.is_some_and(|n| matches!(b[i + 1 + n], b'}' | b']')) {
                    b[i] = b' ';
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// The index just past the string that starts at `start` (a `"`), or the
/// end of the text if it never closes.
fn skip_string(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_go_and_strings_stay() {
        let text = "{\n  // a comment, with a comma,\n  \"a\": [1, 2,],\n  \"b,\": \"x,]\", /* é */\n}";
        let json = to_json(text);
        assert_eq!(json.len(), text.len());
        assert_eq!(json.lines().count(), text.lines().count());
        let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(v["a"], serde_json::json!([1, 2]));
        assert_eq!(v["b,"], "x,]");
    }

    #[test]
    fn errors_keep_their_original_position() {
        let json = to_json("{\n  \"a\": 1 2,\n}");
        let e = serde_json::from_str::<serde_json::Value>(&json).unwrap_err();
        assert_eq!((e.line(), e.column()), (2, 10));
        assert!(serde_json::from_str::<serde_json::Value>(&to_json("{ /* open")).is_err());
        assert!(serde_json::from_str::<serde_json::Value>(&to_json("{\"a\": \"open")).is_err());
    }
}
