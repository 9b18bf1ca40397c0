//! The root's workspace lists, narrowed to the kept projects.
//!
//! A glob (`apps/*`) stays as written: in the output it matches only the
//! projects that were copied. A literal directory of a project that was
//! pruned away goes, since npm, pnpm and bun refuse a listed workspace
//! that does not exist. Globs are kept rather than expanded so the root
//! `package.json` still agrees with what the lockfile recorded of it (npm
//! keeps the root's `workspaces` in its lockfile).

use std::collections::BTreeSet;

use super::json_edit;

/// Whether the workspace pattern stays: a glob or negation, or a kept directory.
pub(super) fn keeps_pattern(pattern: &str, kept: &BTreeSet<String>) -> bool {
    if pattern.contains(['*', '?', '[', '{', '!']) {
        return true;
    }
    let dir = pattern.trim_start_matches("./").trim_end_matches('/');
    kept.contains(dir)
}

/// The root `package.json` with its `workspaces` (array, or yarn's
/// `{ "packages": [...] }`) narrowed.
pub(super) fn package_json(text: &str, kept: &BTreeSet<String>) -> Result<String, String> {
    serde_json::from_str::<serde_json::Value>(text).map_err(|e| e.to_string())?;
    let keep = |item: &json_edit::Item, t: &str| {
        serde_json::from_str::<String>(item.value(t)).map_or(true, |p| keeps_pattern(&p, kept))
    };
    let text = json_edit::retain(text, &["workspaces"], keep)?;
    json_edit::retain(&text, &["workspaces", "packages"], keep)
}

/// `pnpm-workspace.yaml` with the list items of `packages:` narrowed.
pub(super) fn pnpm_workspace(text: &str, kept: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_packages = false;
    for line in text.split_inclusive('\n') {
        if !line.starts_with([' ', '-', '\t', '#']) && !line.trim().is_empty() {
            in_packages = line.starts_with("packages:");
        }
        let item = line.trim().strip_prefix("- ").map(|p| p.trim().trim_matches(['"', '\'']));
        if in_packages && item.is_some_and(|p| !keeps_pattern(p, kept)) {
            continue;
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept() -> BTreeSet<String> {
        ["apps/web".to_string()].into()
    }

    #[test]
    fn literal_dirs_of_pruned_projects_go_and_globs_stay() {
        let text = "{\"workspaces\": [\"apps/web\", \"apps/api\", \"packages/*\"]}";
        assert_eq!(package_json(text, &kept()).expect("edits"), "{\"workspaces\": [\"apps/web\", \"packages/*\"]}");
        let yarn = "{\"workspaces\": {\"packages\": [\"./apps/api\", \"apps/web/\"]}}";
        assert_eq!(package_json(yarn, &kept()).expect("edits"), "{\"workspaces\": {\"packages\": [\"apps/web/\"]}}");
        let pnpm = "packages:\n  - 'apps/api'\n  - apps/web\n  - \"libs/*\"\ncatalog:\n  - apps/api\n";
        assert_eq!(pnpm_workspace(pnpm, &kept()), "packages:\n  - apps/web\n  - \"libs/*\"\ncatalog:\n  - apps/api\n");
    }
}
