//! `vx run --verify=determinism`: does each requested task produce the same
//! outputs when it runs again? A task that does not (a timestamp, a random
//! id, an unsorted directory listing) gives the cache entries that differ
//! from what a build from scratch would give, and remote-cache hits that
//! depend on which machine built first.
//!
//! The run goes as usual first (dependencies built or restored). Then the
//! requested tasks alone run twice, uncached, each time from a clean output
//! state (a task's outputs are removed before it executes); the first
//! run's outputs are copied aside and compared, file by file, with the
//! second's. What differs is reported by path, with the first differing
//! byte.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cache::output_files;
use crate::config::Workspace;
use crate::graph::TaskGraph;

/// How a file of one task's outputs compares across the two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Difference {
    /// The two copies differ, first at this byte (0-based).
    Bytes {
        path: String,
        offset: u64,
    },
    OnlyFirst(String),
    OnlySecond(String),
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Bytes { path, offset } => write!(f, "{path} differs from byte {offset}"),
            Difference::OnlyFirst(path) => write!(f, "{path} was written by the first run only"),
            Difference::OnlySecond(path) => write!(f, "{path} was written by the second run only"),
        }
    }
}

/// The output files of `node`: `(workspace-relative path, absolute path)`,
/// as its cache entry would hold them.
fn outputs_of(ws: &Workspace, graph: &TaskGraph, node: usize) -> std::io::Result<Vec<(String, PathBuf)>> {
    let n = &graph.nodes[node];
    let project = &ws.projects[n.project];
    output_files(&ws.root, &project.dir, &project.tasks[&n.id.task]).map_err(std::io::Error::other)
}

/// The first run's outputs of every requested task, copied aside.
#[derive(Debug)]
pub(crate) struct Snapshot {
    dir: PathBuf,
    /// Per requested node: the workspace-relative paths it wrote.
    files: Vec<(usize, BTreeSet<String>)>,
}

impl Snapshot {
    /// Copies the outputs of `graph.roots` under `dir` (made empty first).
    pub(crate) fn take(ws: &Workspace, graph: &TaskGraph, dir: &Path) -> std::io::Result<Snapshot> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir)?;
        let mut files = Vec::new();
        for &node in &graph.roots {
            let mut paths = BTreeSet::new();
            for (rel, abs) in outputs_of(ws, graph, node)? {
                let copy = dir.join(node.to_string()).join(&rel);
                std::fs::create_dir_all(copy.parent().unwrap_or(dir))?;
                std::fs::copy(&abs, &copy)?;
                paths.insert(rel);
            }
            files.push((node, paths));
        }
        Ok(Snapshot { dir: dir.to_path_buf(), files })
    }

    /// Each requested task's differences between the copies and what is on
    /// disk now; tasks without any are left out.
    pub(crate) fn compare(&self, ws: &Workspace, graph: &TaskGraph) -> std::io::Result<Vec<(String, Vec<Difference>)>> {
        let mut report = Vec::new();
        for (node, first) in &self.files {
            let now = outputs_of(ws, graph, *node)?;
            let second: BTreeSet<&String> = now.iter().map(|(rel, _)| rel).collect();
            let mut diffs: Vec<Difference> =
                first.iter().filter(|p| !second.contains(p)).map(|p| Difference::OnlyFirst(p.clone())).collect();
            for (rel, abs) in &now {
                if !first.contains(rel) {
                    diffs.push(Difference::OnlySecond(rel.clone()));
                } else if let Some(offset) = first_difference(&self.dir.join(node.to_string()).join(rel), abs)? {
                    diffs.push(Difference::Bytes { path: rel.clone(), offset });
                }
            }
            if !diffs.is_empty() {
                report.push((graph.nodes[*node].id.to_string(), diffs));
            }
        }
        Ok(report)
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The first byte at which files `a` and `b` differ (a shorter file differs
/// at its end), `None` when they are the same.
fn first_difference(a: &Path, b: &Path) -> std::io::Result<Option<u64>> {
    let (mut a, mut b) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut buf_a, mut buf_b) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    let mut offset = 0u64;
    loop {
        let n = read_full(&mut a, &mut buf_a)?;
        let m = read_full(&mut b, &mut buf_b)?;
        if let Some(i) = buf_a[..n.min(m)].iter().zip(&buf_b[..n.min(m)]).position(|(x, y)| x != y) {
            return Ok(Some(offset + i as u64));
        }
        if n != m {
            return Ok(Some(offset + n.min(m) as u64));
        }
        if n == 0 {
            return Ok(None);
        }
        offset += n as u64;
    }
}

/// Fills `buf` as far as the file allows.
fn read_full(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_byte_is_found_across_buffers() {
        let dir = std::env::temp_dir().join(format!("vx-verify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        let mut bytes = vec![7u8; 200_000];
        std::fs::write(&a, &bytes).unwrap();
        std::fs::write(&b, &bytes).unwrap();
        assert_eq!(first_difference(&a, &b).unwrap(), None);
        bytes[150_001] = 8;
        std::fs::write(&b, &bytes).unwrap();
        assert_eq!(first_difference(&a, &b).unwrap(), Some(150_001));
        std::fs::write(&b, &bytes[..1000]).unwrap();
        assert_eq!(first_difference(&a, &b).unwrap(), Some(1000), "a shorter file differs at its end");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
