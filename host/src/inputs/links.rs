//! Inputs reached through links out of the workspace: keyed by what they
//! hold like any other, and said once, since `vx watch` and `--affected`
//! look inside the workspace only.

use std::path::{Path, PathBuf};

use super::walk::FileRef;
use crate::config::Task;

/// Says once per task and vx process that some of its inputs are reached
/// through links out of the workspace: they are keyed by what they hold,
/// like any input, but `vx watch` and `--affected` look inside the
/// workspace only, so an edit there re-runs nothing until the next key.
/// Only files reached through a link are looked at, a directory each.
pub(super) fn note_links_out(root: &Path, project_dir: &Path, task: &Task, runs: &[Vec<FileRef>]) {
    static NOTED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<PathBuf>>> =
        std::sync::OnceLock::new();
    let noted = NOTED.get_or_init(std::sync::Mutex::default);
    let id = project_dir.join(&task.name);
    // Keying runs this for every task, and again before storing: once the
    // task was noted, or when nothing came through a link, nothing is
    // resolved.
    if !runs.iter().flatten().any(|f| f.via_link) || noted.lock().expect("noted lock poisoned").contains(&id) {
        return;
    }
    let mut outside: Vec<PathBuf> = Vec::new();
    let mut seen: std::collections::HashSet<&Path> = std::collections::HashSet::new();
    for f in runs.iter().flatten().filter(|f| f.via_link) {
        let Some(dir) = f.abs.parent().filter(|d| seen.insert(d)) else { continue };
        if let Ok(real) = dir.canonicalize()
            && !real.starts_with(root)
            && !outside.iter().any(|o| real.starts_with(o))
        {
            outside.push(real);
        }
    }
    if outside.is_empty() {
        return;
    }
    if !noted.lock().expect("noted lock poisoned").insert(id) {
        return;
    }
    outside.sort();
    let shown: Vec<String> = outside.iter().take(3).map(|p| p.display().to_string()).collect();
    let more = outside.len().saturating_sub(3);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    tracing::info!(
        target: "vx",
        "task `{}` of {}: inputs reached through links out of the workspace ({}{more}) are keyed by their content; vx watch and --affected do not see edits there",
        task.name,
        project_dir.strip_prefix(root).unwrap_or(project_dir).display(),
        shown.join(", ")
    );
}
