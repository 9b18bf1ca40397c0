//! A project's `package.json` as a task's key takes it: normalised so that
//! formatting and key order do not matter, and nothing else is dropped.
//!
//! Every field counts. Dropping "metadata" such as `description`,
//! `keywords` or `author` was weighed and refused: tools read arbitrary
//! fields (a CLI prints `description` in `--help`, a bundler inlines
//! `version`, `browserslist`, `jest`, `eslintConfig` and `prettier` live
//! there), and a stale output served from cache costs far more than the
//! rare rebuild after an edit to a field that turned out not to matter.
//!
//! Normal form: objects with keys sorted (by bytes) at every depth, no
//! whitespace, strings in serde_json's escaping, numbers as serde_json
//! prints them. Array order is kept: it means something (`files`,
//! `workspaces`, `exports` conditions). A duplicated key keeps its last
//! value, as `JSON.parse` does.

use std::fmt::Write;
use std::path::Path;

use serde_json::Value;

use super::LockfileError;
use super::error::Problem;
use super::read::read_text;

const MAX_PACKAGE_JSON_BYTES: u64 = 16 * 1024 * 1024;

/// A `package.json` in normal form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageJson {
    canonical: String,
}

impl PackageJson {
    /// Reads and normalises the file. On an error the caller hashes the
    /// file's bytes instead (`whole_file_digest`), with a notice.
    pub fn read(path: &Path) -> Result<Self, LockfileError> {
        let text = read_text(path, MAX_PACKAGE_JSON_BYTES)?;
        Self::from_text(&text).map_err(|p| p.at(path))
    }

    pub(crate) fn from_text(text: &str) -> Result<Self, Problem> {
        // serde_json bounds nesting (128 levels), which bounds the
        // recursion of `write_canonical` too.
        let value: Value = serde_json::from_str(text)?;
        let mut canonical = String::with_capacity(text.len());
        write_canonical(&value, &mut canonical);
        Ok(Self { canonical })
    }

    /// The normal form, as JSON text.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    pub fn digest(&self) -> blake3::Hash {
        blake3::Hasher::new_derive_key("vx package.json v1").update(self.canonical.as_bytes()).finalize()
    }
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

/// `s` as a JSON string, escaped as serde_json escapes (`\"`, `\\`, the
/// short forms of control characters, `\u00XX` for the others), written
/// in place: a manifest has hundreds of strings and every run reads 500
/// manifests.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        PackageJson::from_text(text).expect("parses").canonical().to_string()
    }

    #[test]
    fn key_order_and_whitespace_do_not_matter_but_values_and_array_order_do() {
        let a = PackageJson::from_text(r#"{"name": "web", "dependencies": {"b": "1", "a": "2"}, "files": ["x", "y"]}"#);
        let b = PackageJson::from_text(
            "{\n  \"files\": [\"x\",\"y\"],\n  \"dependencies\": {\"a\": \"2\", \"b\": \"1\"},\n  \"name\": \"web\"\n}",
        );
        let (a, b) = (a.expect("parses"), b.expect("parses"));
        assert_eq!(a, b);
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.canonical(), r#"{"dependencies":{"a":"2","b":"1"},"files":["x","y"],"name":"web"}"#);
        let reordered =
            PackageJson::from_text(r#"{"name": "web", "dependencies": {"b": "1", "a": "2"}, "files": ["y", "x"]}"#);
        assert_ne!(a.digest(), reordered.expect("parses").digest());
        for tricky in ["a\"b", "back\\slash", "line\nbreak\ttab\r\u{8}\u{c}", "\u{1}\u{1f}", "é ✓"] {
            let mut ours = String::new();
            write_string(tricky, &mut ours);
            assert_eq!(ours, serde_json::to_string(tricky).unwrap(), "escaped as serde_json escapes {tricky:?}");
        }
        let described = PackageJson::from_text(
            r#"{"name": "web", "description": "d", "dependencies": {"b": "1", "a": "2"}, "files": ["x", "y"]}"#,
        );
        assert_ne!(a.digest(), described.expect("parses").digest());
    }

    #[test]
    fn strings_numbers_and_duplicates_have_one_form() {
        assert_eq!(
            canonical(r#"{"a": "\u0041\n", "n": 1.5, "z": null, "t": true}"#),
            r#"{"a":"A\n","n":1.5,"t":true,"z":null}"#
        );
        assert_eq!(canonical(r#"{"a": 1, "a": 2}"#), r#"{"a":2}"#);
    }

    #[test]
    fn bad_input_is_an_error_with_its_position() {
        assert!(matches!(PackageJson::from_text("{\n  \"a\": }"), Err(Problem::Syntax { line: 2, .. })));
        let deep = "[".repeat(10_000);
        assert!(matches!(PackageJson::from_text(&deep), Err(Problem::Syntax { .. })));
    }
}
