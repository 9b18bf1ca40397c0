//! YAML helpers shared by `pnpm-lock.yaml` and yarn berry's `yarn.lock`.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, Visitor};

use super::error::Problem;

/// A scalar read as the text it was written as. Lockfiles write versions
/// and checksums unquoted, and YAML would type `10` or `true` otherwise;
/// a string is what every such field means.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Scalar(pub(crate) String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl Visitor<'_> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
                Ok(Scalar(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(ScalarVisitor)
    }
}

/// Flow collections (`[…]`, `{…}`) nested deeper than this are refused
/// before parsing. pnpm writes them one or two deep (`{integrity: …}`),
/// berry not at all.
const MAX_FLOW_DEPTH: usize = 32;

/// Deserialises the last document of a YAML stream. Recent pnpm versions
/// may put a document for pnpm's own tooling (its config dependencies and
/// its own version) before the lockfile proper, which comes last.
pub(crate) fn last_document<T: DeserializeOwned>(text: &str) -> Result<T, Problem> {
    check_flow_depth(text)?;
    let mut last = None;
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        last = Some(T::deserialize(document)?);
    }
    last.ok_or_else(|| Problem::malformed("the file is empty"))
}

/// Refuses flow collections nested past [`MAX_FLOW_DEPTH`], in one linear
/// pass. libyaml's scanner (under serde_yaml_ng) does work proportional
/// to the flow depth for every token, so a file that opens 100,000
/// brackets takes minutes to refuse; this check takes microseconds.
///
/// It tracks what a YAML scanner would: quoted scalars (which begin where
/// a token begins: at a line's first character, or after `[`, `{`, `,`,
/// `:`, `- ` or `? `) and comments (`#` after a space). It is exact for
/// anything a package manager or a merge writes, and errs towards
/// counting a bracket that a full scanner would not; it is not built to
/// defeat a file crafted to evade it, which would be a lockfile someone
/// can already use to choose what `install` runs.
fn check_flow_depth(text: &str) -> Result<(), Problem> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut token_start = true;
    let mut blank_before = true;
    let (mut line, mut column) = (1usize, 0usize);
    let mut bytes = text.bytes().peekable();
    while let Some(b) = bytes.next() {
        column += 1;
        if b == b'\n' {
            (line, column) = (line + 1, 0);
            token_start = true;
            blank_before = true;
            continue;
        }
        match quote {
            Some(b'"') if b == b'\\' => match bytes.next() {
                Some(b'\n') => (line, column) = (line + 1, 0),
                _ => column += 1,
            },
            Some(q) if b == q => {
                // A doubled single quote is an escaped one.
                if q == b'\'' && bytes.peek() == Some(&b'\'') {
                    bytes.next();
                    column += 1;
                } else {
                    quote = None;
                }
            }
            Some(_) => {}
            None => match b {
                b' ' | b'\t' | b'\r' => {}
                b'#' if blank_before => {
                    while bytes.peek().is_some_and(|&c| c != b'\n') {
                        bytes.next();
                    }
                }
                b'"' | b'\'' if token_start => quote = Some(b),
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Err(Problem::Syntax {
                            line,
                            column,
                            message: format!("flow collections nested deeper than {MAX_FLOW_DEPTH}"),
                        });
                    }
                    (token_start, blank_before) = (true, false);
                    continue;
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                b',' => {
                    (token_start, blank_before) = (true, false);
                    continue;
                }
                b':' | b'-' | b'?' if bytes.peek().is_none_or(|c| c.is_ascii_whitespace()) => {
                    (token_start, blank_before) = (true, false);
                    continue;
                }
                _ => {}
            },
        }
        let blank = matches!(b, b' ' | b'\t' | b'\r');
        blank_before = blank && quote.is_none();
        if !blank || quote.is_some() {
            token_start = false;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn scalars_keep_their_text_and_the_last_document_wins() {
        let text = "a: 10\nb: true\nc: 1.0.0\n";
        let map: HashMap<String, Scalar> = last_document(text).expect("parses");
        assert_eq!(map["a"].0, "10");
        assert_eq!(map["b"].0, "true");
        assert_eq!(map["c"].0, "1.0.0");
        let two: HashMap<String, Scalar> = last_document("---\na: first\n---\na: second\n").expect("parses");
        assert_eq!(two["a"].0, "second");
    }

    #[test]
    fn deep_flow_nesting_is_refused_and_brackets_in_scalars_do_not_count() {
        let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let err = check_flow_depth(&deep).unwrap_err();
        assert_eq!(
            err,
            Problem::Syntax { line: 1, column: 36, message: "flow collections nested deeper than 32".into() }
        );
        let fine = format!(
            "a: '{}'\nb: \"{}\\\"\"\nc: x # {}\nd: {{e: [f, 'it''s [']}}\n",
            "[".repeat(99),
            "{".repeat(99),
            "[".repeat(99)
        );
        assert_eq!(check_flow_depth(&fine), Ok(()));
        let ok: HashMap<String, serde_yaml_ng::Value> = last_document(&fine).expect("valid YAML");
        assert_eq!(ok.len(), 4);
    }
}
