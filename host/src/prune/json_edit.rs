//! Editing JSON (and bun's JSONC) in place: the members of one object or
//! the elements of one array are filtered by cutting their text out, so
//! everything kept stays byte for byte as the package manager wrote it
//! (key order, indentation, blank lines, trailing commas).
//!
//! A small scanner finds each item's span; it skips strings with their
//! escapes and `//` and `/* */` comments. It only locates spans: the text
//! is parsed with serde_json by the caller, so a malformed file has
//! already been refused with a line and column.

/// One member of an object (`key` is `Some`) or element of an array.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub(super) key: Option<String>,
    /// Where the item starts: its key's quote, or the element's first byte.
    start: usize,
    value_start: usize,
    /// One past the end of its value.
    end: usize,
}

impl Item {
    /// The text of the item's value.
    pub(super) fn value<'t>(&self, text: &'t str) -> &'t str {
        &text[self.value_start..self.end]
    }
}

/// The container at `path` (object keys from the top): its items and the
/// offsets of its opening and closing brackets.
struct Container {
    items: Vec<Item>,
    open: usize,
    close: usize,
}

/// Keeps the items of the object or array at `path` for which `keep` says
/// so; the text is unchanged when all are kept or `path` is absent.
pub(super) fn retain(text: &str, path: &[&str], keep: impl Fn(&Item, &str) -> bool) -> Result<String, String> {
    let Some(c) = find(text, path)? else { return Ok(text.to_string()) };
    if c.items.iter().all(|i| keep(i, text)) {
        return Ok(text.to_string());
    }
    let kept: Vec<&Item> = c.items.iter().filter(|i| keep(i, text)).collect();
    if kept.is_empty() {
        return Ok(format!("{}{}", &text[..=c.open], &text[c.close..]));
    }
    let (first, last) = (&c.items[0], &c.items[c.items.len() - 1]);
    // Items are joined by what the writer put between its first two: a
    // comma, a newline, indentation, and a blank line if it leaves one.
    let sep = match c.items.get(1) {
        Some(second) => &text[first.end..second.start],
        None => ",",
    };
    let body: Vec<&str> = kept.iter().map(|i| &text[i.start..i.end]).collect();
    Ok(format!("{}{}{}", &text[..first.start], body.join(sep), &text[last.end..]))
}

fn find(text: &str, path: &[&str]) -> Result<Option<Container>, String> {
    let s = Scanner { b: text.as_bytes() };
    let mut at = s.skip_blank(0);
    for key in path {
        let c = s.container(at)?;
        let Some(item) = c.items.iter().find(|i| i.key.as_deref() == Some(key)) else { return Ok(None) };
        let colon = s.skip_blank(s.string_end(item.start)?);
        at = s.skip_blank(colon + 1);
    }
    match s.b.get(at) {
        Some(b'{' | b'[') => s.container(at).map(Some),
        _ => Ok(None),
    }
}

struct Scanner<'a> {
    b: &'a [u8],
}

impl Scanner<'_> {
    fn skip_blank(&self, mut i: usize) -> usize {
        loop {
            match (self.b.get(i), self.b.get(i + 1)) {
                (Some(c), _) if c.is_ascii_whitespace() => i += 1,
                (Some(b'/'), Some(b'/')) => {
                    while i < self.b.len() && self.b[i] != b'\n' {
                        i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    i = self.b[i + 2..].windows(2).position(|w| w == b"*/").map_or(self.b.len(), |p| i + 2 + p + 2);
                }
                _ => return i,
            }
        }
    }

    /// `i` at a `"`: one past the closing quote.
    fn string_end(&self, i: usize) -> Result<usize, String> {
        let mut j = i + 1;
        while j < self.b.len() {
            match self.b[j] {
                b'\\' => j += 2,
                b'"' => return Ok(j + 1),
                _ => j += 1,
            }
        }
        Err(format!("unterminated string at byte {i}"))
    }

    fn value_end(&self, i: usize) -> Result<usize, String> {
        match self.b.get(i) {
            Some(b'"') => self.string_end(i),
            Some(b'{' | b'[') => Ok(self.container(i)?.close + 1),
            Some(_) => {
                let mut j = i;
                while j < self.b.len() && !matches!(self.b[j], b',' | b'}' | b']') && !self.b[j].is_ascii_whitespace() {
                    j += 1;
                }
                Ok(j)
            }
            None => Err("unexpected end of the file".to_string()),
        }
    }

    /// `i` at a `{` or `[`.
    fn container(&self, open: usize) -> Result<Container, String> {
        let object = self.b.get(open) == Some(&b'{');
        if !object && self.b.get(open) != Some(&b'[') {
            return Err(format!("expected an object or array at byte {open}"));
        }
        let closing = if object { b'}' } else { b']' };
        let mut items = Vec::new();
        let mut i = self.skip_blank(open + 1);
        loop {
            match self.b.get(i) {
                Some(&c) if c == closing => return Ok(Container { items, open, close: i }),
                Some(b',') => i = self.skip_blank(i + 1),
                Some(_) => {
                    let start = i;
                    let key = if object {
                        let key_end = self.string_end(i)?;
                        let text = std::str::from_utf8(&self.b[i..key_end]).map_err(|e| e.to_string())?;
                        let key: String = serde_json::from_str(text).map_err(|e| e.to_string())?;
                        let colon = self.skip_blank(key_end);
                        if self.b.get(colon) != Some(&b':') {
                            return Err(format!("expected `:` at byte {colon}"));
                        }
                        i = self.skip_blank(colon + 1);
                        Some(key)
                    } else {
                        None
                    };
                    let end = self.value_end(i)?;
                    items.push(Item { key, start, value_start: i, end });
                    i = self.skip_blank(end);
                }
                None => return Err("unexpected end of the file".to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep_not(text: &str, path: &[&str], drop: &str) -> String {
        retain(text, path, |i, t| i.key.as_deref().unwrap_or(i.value(t)) != drop).expect("edits")
    }

    #[test]
    fn members_are_cut_with_their_separators_and_formatting_kept() {
        let text = "{\n  \"p\": {\n    \"a\": 1,\n    \"b\": {\"x\": [1, 2]},\n    \"c\": \"}\"\n  },\n  \"z\": 0\n}\n";
        assert_eq!(keep_not(text, &["p"], "b"), text.replace("    \"b\": {\"x\": [1, 2]},\n", ""));
        assert_eq!(keep_not(text, &["p"], "c"), text.replace(",\n    \"c\": \"}\"", ""));
        assert_eq!(keep_not(text, &["p"], "a"), text.replace("    \"a\": 1,\n", ""));
        assert_eq!(keep_not(text, &["missing"], "a"), text);
    }

    #[test]
    fn trailing_commas_blank_lines_and_arrays_survive() {
        let text = "{\n  \"p\": {\n    \"a\": [\"a@1\"],\n\n    \"b\": [\"b@1\"],\n  },\n  \"w\": [\"x\", \"y\"],\n}";
        assert_eq!(
            keep_not(text, &["p"], "b"),
            "{\n  \"p\": {\n    \"a\": [\"a@1\"],\n  },\n  \"w\": [\"x\", \"y\"],\n}"
        );
        assert_eq!(keep_not(text, &["w"], "\"x\""), text.replace("[\"x\", \"y\"]", "[\"y\"]"));
        let only = "{\"p\": {\"a\": 1}}";
        assert_eq!(keep_not(only, &["p"], "a"), "{\"p\": {}}");
    }

    #[test]
    fn values_are_read_back() {
        let text = "{\"p\": {\"k\" : [\"v\"]}}";
        let out = retain(text, &["p"], |i, t| i.value(t) != "[\"v\"]").expect("edits");
        assert_eq!(out, "{\"p\": {}}");
    }
}
