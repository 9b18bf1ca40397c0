//! yarn classic's `yarn.lock` (`# yarn lockfile v1`, also what bun writes
//! when asked for a yarn lockfile).
//!
//! The format is yarn's own: comments (`#`), blank lines, and entries of
//! two-space indented `key value` lines under a header naming every
//! descriptor that resolved to the entry:
//!
//! ```text
//! "@vxf/core@^1.0.0", "@vxf/core@^1.1.0":
//!   version "1.0.0"
//!   resolved "https://registry.example/@vxf/core/-/core-1.0.0.tgz#80a6…"
//!   integrity sha512-nmpD…
//!   dependencies:
//!     left-pad "^1.3.0"
//! ```
//!
//! Quoted strings are JSON strings. The parser is strict: tabs, odd
//! indents, a header without its colon or an entry without a version are
//! errors with their line. No crate is used: the one there is reports
//! errors without a line, and its few hundred lines would buy nothing that
//! these do not. Workspaces are not in the file; their manifests are
//! (`workspaces::load`).

use std::collections::HashMap;
use std::path::Path;

use super::error::Problem;
use super::graph::{DepGraph, GraphBuilder, NodeId};
use super::workspaces::{self, Manifest};
use super::yarn::descriptor_name;
use super::{Integrity, LockfileFormat, ResolvedDep};

/// One entry of the file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) descriptors: Vec<String>,
    pub(crate) version: String,
    pub(crate) resolved: Option<String>,
    pub(crate) integrity: Option<String>,
    /// `(name, range)` from `dependencies` and `optionalDependencies`.
    pub(crate) deps: Vec<(String, String)>,
}

pub(crate) fn parse(text: &str, root: &Path) -> Result<(LockfileFormat, DepGraph), Problem> {
    let entries = parse_entries(text)?;
    let manifests = workspaces::load(root)?;
    Ok((LockfileFormat::YarnClassic, graph(&entries, &manifests)))
}

fn graph(entries: &[Entry], manifests: &[Manifest]) -> DepGraph {
    let mut graph = GraphBuilder::default();
    let mut by_descriptor: HashMap<&str, NodeId> = HashMap::new();
    let mut nodes = Vec::with_capacity(entries.len());
    for entry in entries {
        let node = graph.add_package(ResolvedDep {
            name: entry.descriptors.first().map_or("", |d| package_name(d)).to_string(),
            version: entry.version.clone(),
            integrity: Integrity::from_parts(entry.integrity.as_deref(), entry.resolved.as_deref()),
        });
        nodes.push(node);
        for d in &entry.descriptors {
            by_descriptor.insert(d, node);
        }
    }
    // A dependency missing from the file is a workspace package (yarn
    // links those and does not lock them) or a stale lockfile; neither is
    // an external pin to count.
    let resolve = |name: &str, range: &str| by_descriptor.get(format!("{name}@{range}").as_str()).copied();
    for (entry, &from) in entries.iter().zip(&nodes) {
        for (name, range) in &entry.deps {
            if let Some(to) = resolve(name, range) {
                graph.add_edge(from, to);
            }
        }
    }
    // yarn links a workspace whenever its version satisfies the range,
    // which is what naming a workspace package is for: such a dependency
    // is the workspace, even if some package's same descriptor is locked.
    let workspace_names: Vec<&str> = manifests.iter().filter_map(|m| m.name.as_deref()).collect();
    for m in manifests {
        let mut direct = Vec::new();
        let mut complete = true;
        for (name, range) in m.deps.iter().filter(|(name, _)| !workspace_names.contains(&name.as_str())) {
            match resolve(name, range).or_else(|| root_relative(&m.dir, range).and_then(|r| resolve(name, &r))) {
                Some(node) => direct.push(node),
                None => complete = false,
            }
        }
        graph.add_project(&m.dir, direct);
        if !complete {
            graph.mark_unresolved(&m.dir);
        }
    }
    graph.build()
}

/// A `file:` specifier as yarn classic locks it: relative to the workspace
/// root rather than to the manifest that wrote it (`file:../../vendor/x.tgz`
/// in `apps/web` is locked as `file:vendor/x.tgz`, or `file:../vendor/x.tgz`
/// for a directory beside the root).
fn root_relative(manifest_dir: &str, range: &str) -> Option<String> {
    let path = range.strip_prefix("file:")?;
    let joined = std::path::Path::new(manifest_dir).join(path);
    let mut parts: Vec<&str> = Vec::new();
    let mut ups = 0;
    for part in joined.to_str()?.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.pop().is_none() => ups += 1,
            ".." => {}
            other => parts.push(other),
        }
    }
    Some(format!("file:{}{}", "../".repeat(ups), parts.join("/")))
}

/// The package a descriptor installs: its name, or for an npm alias
/// (`alias@npm:real@^1`) the real package's.
fn package_name(descriptor: &str) -> &str {
    let name = descriptor_name(descriptor);
    match descriptor[name.len()..].strip_prefix("@npm:") {
        Some(aliased) if aliased.get(1..).is_some_and(|r| r.contains('@')) => descriptor_name(aliased),
        _ => name,
    }
}

/// Parses the entries, in file order.
pub(crate) fn parse_entries(text: &str) -> Result<Vec<Entry>, Problem> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut entry_line = 0;
    // The map the current indent-4 lines belong to, if one is open.
    let mut section: Option<Section> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let err =
            |column: usize, message: &str| Problem::Syntax { line: line_no, column, message: message.to_string() };
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let body = line.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        if body.starts_with('\t') {
            return Err(err(indent + 1, "tab in indentation"));
        }
        match indent {
            0 => {
                finish(entries.last(), entry_line)?;
                let header =
                    body.strip_suffix(':').ok_or_else(|| err(line.len(), "an entry header must end with ':'"))?;
                let descriptors = list(header).map_err(|(col, m)| err(col + 1, m))?;
                entries.push(Entry { descriptors, ..Entry::default() });
                entry_line = line_no;
                section = None;
            }
            2 => {
                let entry = entries.last_mut().ok_or_else(|| err(1, "a field outside any entry"))?;
                let (key, value) = key_value(body).map_err(|(col, m)| err(indent + col + 1, m))?;
                section = None;
                match (key.as_str(), value) {
                    ("dependencies" | "optionalDependencies", None) => section = Some(Section::Deps),
                    (_, None) => section = Some(Section::Other),
                    ("version", Some(v)) => entry.version = v,
                    ("resolved", Some(v)) => entry.resolved = Some(v),
                    ("integrity", Some(v)) => entry.integrity = Some(v),
                    (_, Some(_)) => {}
                }
            }
            4 => {
                let entry = entries.last_mut().ok_or_else(|| err(1, "a field outside any entry"))?;
                let open = section.ok_or_else(|| err(5, "an indented line outside a map"))?;
                let (key, value) = key_value(body).map_err(|(col, m)| err(indent + col + 1, m))?;
                let value = value.ok_or_else(|| err(indent + 1, "a nested map inside a map"))?;
                if open == Section::Deps {
                    entry.deps.push((key, value));
                }
            }
            _ => return Err(err(indent + 1, "indentation must be 0, 2 or 4 spaces")),
        }
    }
    finish(entries.last(), entry_line)?;
    Ok(entries)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Deps,
    Other,
}

fn finish(entry: Option<&Entry>, line: usize) -> Result<(), Problem> {
    match entry {
        Some(e) if e.version.is_empty() => {
            Err(Problem::Syntax { line, column: 1, message: "the entry has no version".to_string() })
        }
        _ => Ok(()),
    }
}

type ColumnError = (usize, &'static str);

/// `"a@^1", a@^2` → [`a@^1`, `a@^2`].
fn list(header: &str) -> Result<Vec<String>, ColumnError> {
    let mut items = Vec::new();
    let mut rest = header;
    loop {
        let at = header.len() - rest.len();
        rest = rest.trim_start_matches(' ');
        let (item, after) = if rest.starts_with('"') {
            quoted(rest).map_err(|(c, m)| (at + c, m))?
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            (rest[..end].trim_end().to_string(), &rest[end..])
        };
        if item.is_empty() {
            return Err((at, "an empty descriptor"));
        }
        items.push(item);
        match after.trim_start_matches(' ').strip_prefix(',') {
            Some(next) => rest = next,
            None if after.trim().is_empty() => return Ok(items),
            None => return Err((header.len() - after.len(), "expected ',' between descriptors")),
        }
    }
}

/// `key value`, `key "value"` or `key:` (a map follows: `None`).
fn key_value(body: &str) -> Result<(String, Option<String>), ColumnError> {
    let (key, rest) = if body.starts_with('"') {
        quoted(body)?
    } else {
        let end = body.find([' ', ':']).unwrap_or(body.len());
        (body[..end].to_string(), &body[end..])
    };
    if key.is_empty() {
        return Err((0, "an empty key"));
    }
    let at = body.len() - rest.len();
    if rest == ":" {
        return Ok((key, None));
    }
    let value = rest.strip_prefix(' ').ok_or((at, "expected a space or ':' after the key"))?;
    let value = if value.starts_with('"') {
        let (v, tail) = quoted(value).map_err(|(c, m)| (at + 1 + c, m))?;
        if !tail.trim().is_empty() {
            return Err((body.len() - tail.len(), "text after a quoted value"));
        }
        v
    } else if value.contains('"') {
        return Err((at + 1, "a quote inside an unquoted value"));
    } else {
        value.trim_end().to_string()
    };
    if value.is_empty() {
        return Err((at, "a key with no value"));
    }
    Ok((key, Some(value)))
}

/// A JSON string at the start of `s`, and what follows it.
fn quoted(s: &str) -> Result<(String, &str), ColumnError> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => {
                let value = serde_json::from_str(&s[..=i]).map_err(|_| (0, "an invalid quoted string"))?;
                return Ok((value, &s[i + 1..]));
            }
            _ => i += 1,
        }
    }
    Err((0, "an unterminated quoted string"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# yarn lockfile v1\n\n\n\"@s/a@^1.0.0\", \"@s/a@^1.1.0\":\n  version \"1.1.0\"\n  \
        resolved \"https://r.example/@s/a/-/a-1.1.0.tgz#abc\"\n  integrity sha512-xyz==\n  dependencies:\n    \
        b \"^2\"\n  optionalDependencies:\n    \"@s/c\" \"1\"\n\nb@^2:\n  version \"2.0.0\"\n";

    #[test]
    fn entries_read_with_every_descriptor_and_dependency() {
        let entries = parse_entries(SAMPLE).expect("parses");
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].descriptors, ["@s/a@^1.0.0", "@s/a@^1.1.0"]);
        assert_eq!(entries[0].version, "1.1.0");
        assert_eq!(entries[0].integrity.as_deref(), Some("sha512-xyz=="));
        assert_eq!(entries[0].deps, [("b".to_string(), "^2".to_string()), ("@s/c".to_string(), "1".to_string())]);
        assert_eq!(entries[1].descriptors, ["b@^2"]);
    }

    #[test]
    fn errors_carry_their_line_and_column() {
        let cases = [
            ("a@1\n  version \"1\"\n", 1, "an entry header must end with ':'"),
            ("a@1:\n   version \"1\"\n", 2, "indentation must be 0, 2 or 4 spaces"),
            ("a@1:\n\tversion \"1\"\n", 2, "tab in indentation"),
            ("a@1:\n  version \"1\n", 2, "an unterminated quoted string"),
            ("a@1:\n  resolved \"x\"\nb@1:\n  version \"1\"\n", 1, "the entry has no version"),
            ("  version \"1\"\n", 1, "a field outside any entry"),
            ("a@1:\n  version \"1\"\n    b \"1\"\n", 3, "an indented line outside a map"),
            ("\"a@1\" b@1:\n  version \"1\"\n", 1, "expected ',' between descriptors"),
        ];
        for (text, line, message) in cases {
            match parse_entries(text) {
                Err(Problem::Syntax { line: l, message: m, .. }) => {
                    assert_eq!((l, m.as_str()), (line, message), "{text:?}");
                }
                other => panic!("{text:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn file_specifiers_are_locked_relative_to_the_root() {
        assert_eq!(root_relative("apps/web", "file:../../vendor/x.tgz").as_deref(), Some("file:vendor/x.tgz"));
        assert_eq!(root_relative("apps/web", "file:../../../vendor/x.tgz").as_deref(), Some("file:../vendor/x.tgz"));
        assert_eq!(root_relative("", "file:./x").as_deref(), Some("file:x"));
        assert_eq!(root_relative("apps/web", "^1.0.0"), None);
    }

    #[test]
    fn an_alias_installs_the_real_package() {
        assert_eq!(package_name("alias@npm:@s/real@^1.0.0"), "@s/real");
        assert_eq!(package_name("alias@npm:real@^1"), "real");
        assert_eq!(package_name("@s/plain@^1"), "@s/plain");
        assert_eq!(package_name("plain@npm:^1"), "plain");
    }
}
