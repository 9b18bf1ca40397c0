//! Finding the workspace: its root (searched upwards from the starting
//! directory, like git) and its project directories (expanded from globs).
//!
//! The root is the nearest directory with a `vx.toml` that has a
//! `[workspace]` table, or else a `package.json` with `workspaces`, or a
//! `pnpm-workspace.yaml`. When no directory up to the filesystem root is
//! one, the nearest directory with a `package.json` is a single-package
//! workspace (as turbo and npm treat a repository without workspaces).
//! Project globs come from `[workspace] projects`, and when none are given
//! from the npm/yarn/pnpm workspace files.

use std::path::{Path, PathBuf};

use super::error::ConfigError;

/// Walks up from `start` to the workspace root.
pub(crate) fn find_root(start: &Path) -> Result<PathBuf, ConfigError> {
    let mut dir = Some(start);
    let mut nearest_package = None;
    while let Some(d) = dir {
        let package_json = d.join("package.json");
        if has_workspace_table(&d.join("vx.toml"))
            || d.join("pnpm-workspace.yaml").is_file()
            || package_json_has_workspaces(&package_json)
        {
            return Ok(d.to_path_buf());
        }
        // An installed package is never the root, even of a single-package
        // repository.
        let installed = d.components().any(|c| c.as_os_str() == "node_modules");
        if nearest_package.is_none() && !installed && package_json.is_file() {
            nearest_package = Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    nearest_package.ok_or_else(|| ConfigError::NoWorkspace { start: start.to_path_buf() })
}

/// A cheap check that avoids parsing every `vx.toml` on the way up: only the
/// root's may have a `[workspace]` table, and it must be written as one.
fn has_workspace_table(path: &Path) -> bool {
    crate::paths::read_config(path)
        .ok()
        .flatten()
        .is_some_and(|text| text.lines().any(|line| line.trim_start().starts_with("[workspace]")))
}

fn package_json_has_workspaces(path: &Path) -> bool {
    crate::paths::read_config(path)
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|v| v.get("workspaces").is_some())
}

/// Expands project globs (relative to `root`, `!` to exclude) into sorted,
/// de-duplicated directories that hold a `vx.toml` or a `package.json`.
/// `node_modules` is never a project.
pub fn expand_project_globs(root: &Path, globs: &[String]) -> Result<Vec<PathBuf>, ConfigError> {
    let mut include = Vec::new();
    let mut exclude = globset::GlobSetBuilder::new();
    for pattern in globs {
        if let Some(negated) = pattern.strip_prefix('!') {
            let glob =
                globset::Glob::new(negated.trim_start_matches("./")).map_err(|e| bad_glob(pattern, &e.to_string()))?;
            exclude.add(glob);
        } else {
            include.push(pattern.trim_start_matches("./").trim_end_matches('/'));
        }
    }
    let exclude = exclude.build().map_err(|e| bad_glob("!…", &e.to_string()))?;
    let escaped_root = glob::Pattern::escape(&root.to_string_lossy());
    let mut dirs = Vec::new();
    for pattern in include {
        let full = format!("{escaped_root}/{pattern}");
        let paths = glob::glob(&full).map_err(|e| bad_glob(pattern, &e.to_string()))?;
        for path in paths.flatten() {
            let Ok(rel) = path.strip_prefix(root) else { continue };
            if rel.components().any(|c| c.as_os_str() == "node_modules") || exclude.is_match(rel) {
                continue;
            }
            if path.is_dir() && (path.join("vx.toml").is_file() || path.join("package.json").is_file()) {
                dirs.push(path);
            }
        }
    }
    dirs.sort();
    dirs.dedup();
    Ok(dirs)
}

/// The pattern is the workspace file's own text, so it may hold a newline
/// (fuzzing found one in a quoted YAML string); the error stays one line.
fn bad_glob(pattern: &str, why: &str) -> ConfigError {
    ConfigError::BadGlob { pattern: crate::error::one_line(pattern), why: crate::error::one_line(why) }
}
