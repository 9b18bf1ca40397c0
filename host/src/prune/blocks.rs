//! The YAML-like lockfiles (pnpm's, yarn's) as text blocks: one block per
//! entry, from its key line to the next key line at the same indentation,
//! with the blank line after it. Pruning drops whole blocks and rewrites
//! at most a key line, so what is kept is the package manager's own text.

/// One entry: its key line (without the newline) and its whole text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Block<'t> {
    pub(super) line: &'t str,
    pub(super) text: &'t str,
}

impl Block<'_> {
    /// The key of a `key:` or `key: value` line, unquoted.
    pub(super) fn key(&self) -> String {
        let line = self.line.trim_start();
        if let Some(rest) = line.strip_prefix('\'') {
            let mut out = String::new();
            let mut chars = rest.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\'' if chars.peek() == Some(&'\'') => {
                        chars.next();
                        out.push('\'');
                    }
                    '\'' => break,
                    c => out.push(c),
                }
            }
            return out;
        }
        if line.starts_with('"') {
            let end = line.rfind("\":").map_or(line.len(), |i| i + 1);
            return serde_json::from_str(&line[..end]).unwrap_or_else(|_| line[1..end - 1].to_string());
        }
        let end = line.find(": ").unwrap_or_else(|| line.trim_end().strip_suffix(':').map_or(line.len(), str::len));
        line[..end].to_string()
    }

    /// The block after its key line.
    pub(super) fn body(&self) -> &str {
        &self.text[self.line.len()..]
    }
}

/// Splits `text` into what comes before the first key line at `indent`
/// spaces and the blocks from there on. Comment and blank lines belong to
/// the block before them.
pub(super) fn split(text: &str, indent: usize) -> (&str, Vec<Block<'_>>) {
    let mut starts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let depth = line.len() - trimmed.len();
        if depth == indent && !trimmed.trim().is_empty() && !trimmed.starts_with('#') {
            starts.push(offset);
        }
        offset += line.len();
    }
    let preamble = &text[..starts.first().copied().unwrap_or(text.len())];
    let blocks = starts
        .iter()
        .enumerate()
        .map(|(n, &start)| {
            let end = starts.get(n + 1).copied().unwrap_or(text.len());
            let block = &text[start..end];
            let line = block.split('\n').next().unwrap_or_default();
            Block { line, text: block }
        })
        .collect();
    (preamble, blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_at_their_indentation_with_quoted_keys() {
        let text = "a: 1\n\nsection:\n\n  '@s/x@1.0.0':\n    k: v\n\n  y@2: {}\n\n  \"z\":\n    k: 'v'\n";
        let (pre, top) = split(text, 0);
        assert_eq!(pre, "");
        assert_eq!(top.iter().map(|b| b.key()).collect::<Vec<_>>(), ["a", "section"]);
        let (pre, entries) = split(top[1].body(), 2);
        assert_eq!(pre, "\n\n");
        assert_eq!(entries.iter().map(|b| b.key()).collect::<Vec<_>>(), ["@s/x@1.0.0", "y@2", "z"]);
        assert_eq!(entries[0].text, "  '@s/x@1.0.0':\n    k: v\n\n");
    }
}
