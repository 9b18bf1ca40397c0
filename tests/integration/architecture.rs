//! `docs/architecture.md` checked against the code, so the map cannot
//! drift from the house again: every room of `host/src` has a row in the
//! doc's dependency table, every `crate::ROOM` a room's code names is in
//! its row (or in the table of known back-edges), the allowed edges point
//! one way (no cycle), and every back-edge the doc still lists is still
//! there (one that was removed must leave the doc too).
//!
//! A room is a top-level module of the `vx` crate (`host/src/NAME.rs` or
//! `host/src/NAME/`); its uses are the `crate::NAME` paths in its code,
//! comments and `mod tests` blocks aside.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read a source dir") {
        let path = entry.expect("a dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The rooms the code has, and the rooms each one's code names.
fn code_graph() -> Graph {
    let src = repo().join("host/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a path").as_os_str().to_string_lossy().into_owned();
        let room = first.trim_end_matches(".rs").to_string();
        if room == "main" || room == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("read a source file");
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        let uses = graph.entry(room.clone()).or_default();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or_default();
            for (at, _) in line.match_indices("crate::") {
                let before = line[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue; // `vx_crate::`, not `crate::`
                }
                let name: String = line[at + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                if !name.is_empty() && name != room {
                    uses.insert(name);
                }
            }
        }
    }
    graph
}

/// The rows of the markdown table under `heading` in architecture.md:
/// each row's first cell and the names in backticks of its second.
fn doc_table(heading: &str) -> Vec<(String, BTreeSet<String>)> {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).expect("read docs/architecture.md");
    let section = doc.split(heading).nth(1).unwrap_or_else(|| panic!("docs/architecture.md has no `{heading}`"));
    let ticks = |cell: &str| -> BTreeSet<String> { cell.split('`').skip(1).step_by(2).map(str::to_string).collect() };
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let first = ticks(cells[1]).into_iter().next().unwrap_or_else(|| panic!("a row without a name: {row}"));
            (first, ticks(cells[2]))
        })
        .collect()
}

fn allowed() -> Graph {
    doc_table("## Dependencies").into_iter().collect()
}

/// `(from, to)` edges the doc admits are still upward.
fn back_edges() -> BTreeSet<(String, String)> {
    doc_table("### Known back-edges")
        .into_iter()
        .flat_map(|(from, to)| to.into_iter().map(move |t| (from.clone(), t)))
        .collect()
}

#[test]
fn every_room_is_in_the_dependency_table() {
    let code = code_graph();
    let doc = allowed();
    let missing: Vec<&String> = code.keys().filter(|r| !doc.contains_key(*r)).collect();
    let gone: Vec<&String> = doc.keys().filter(|r| !code.contains_key(*r)).collect();
    assert!(missing.is_empty(), "rooms with no row in docs/architecture.md's dependency table: {missing:?}");
    assert!(
        gone.is_empty(),
        "rows of docs/architecture.md's dependency table for rooms that no longer exist: {gone:?}"
    );
}

#[test]
fn every_use_of_another_room_is_allowed_by_the_doc() {
    let doc = allowed();
    let back = back_edges();
    let mut unlisted = Vec::new();
    for (room, uses) in code_graph() {
        for used in uses {
            let listed = doc.get(&room).is_some_and(|row| row.contains(&used));
            if !listed && !back.contains(&(room.clone(), used.clone())) {
                unlisted.push(format!("{room} → {used}"));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "uses the dependency table of docs/architecture.md does not allow (add them there, if they point down): {unlisted:?}"
    );
}

#[test]
fn the_allowed_dependencies_point_one_way() {
    let doc = allowed();
    // Depth-first, colouring rooms on the current path: a room met again
    // on the path closes a cycle.
    fn visit(room: &str, doc: &Graph, path: &mut Vec<String>, done: &mut BTreeSet<String>) {
        if done.contains(room) {
            return;
        }
        if let Some(at) = path.iter().position(|r| r == room) {
            panic!("the dependency table has a cycle: {}", [&path[at..], &[room.to_string()]].concat().join(" → "));
        }
        path.push(room.to_string());
        for next in doc.get(room).into_iter().flatten() {
            visit(next, doc, path, done);
        }
        path.pop();
        done.insert(room.to_string());
    }
    let mut done = BTreeSet::new();
    for room in doc.keys() {
        visit(room, &doc, &mut Vec::new(), &mut done);
    }
}

#[test]
fn every_back_edge_the_doc_lists_is_still_there() {
    let code = code_graph();
    for (from, to) in back_edges() {
        assert!(
            code.get(&from).is_some_and(|uses| uses.contains(&to)),
            "docs/architecture.md lists {from} → {to} as a known back-edge, but the code no longer has it: remove the row"
        );
        assert!(
            !allowed().get(&from).is_some_and(|row| row.contains(&to)),
            "{from} → {to} is both allowed and a known back-edge in docs/architecture.md"
        );
    }
}
