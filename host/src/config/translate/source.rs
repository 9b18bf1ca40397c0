//! Reading the files of the source formats: JSON and YAML into one value
//! type, the JavaScript workspace's packages, and small path helpers.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::error::{InitError, Result};
use crate::config::{expand_project_globs, read_package_json, read_pnpm_workspace};

/// Reads `root/rel` as JSON; `None` when the file does not exist.
pub(crate) fn read_json(root: &Path, rel: &str) -> Result<Option<Value>> {
    let Some(text) = read_text(root, rel)? else { return Ok(None) };
    serde_json::from_str(&text).map(Some).map_err(|e| invalid(rel, &e.to_string()))
}

/// Reads `root/rel` as JSONC (comments and trailing commas allowed, as
/// turbo reads its files); `None` when the file does not exist. A syntax
/// error names the file, line and column.
pub(crate) fn read_jsonc(root: &Path, rel: &str) -> Result<Option<Value>> {
    let Some(text) = read_text(root, rel)? else { return Ok(None) };
    serde_json::from_str(&crate::lockfile::jsonc::to_json(&text)).map(Some).map_err(|e| {
        let why = e.to_string();
        let why = why.find(" at line ").map_or(why.as_str(), |i| &why[..i]).to_string();
        InitError::Unparsable { file: format!("{rel}:{}:{}", e.line(), e.column()), why }
    })
}

/// Reads `root/rel` as YAML; `None` when the file does not exist. An
/// empty file is an empty mapping.
pub(crate) fn read_yaml(root: &Path, rel: &str) -> Result<Option<Value>> {
    let Some(text) = read_text(root, rel)? else { return Ok(None) };
    if text.trim().is_empty() {
        return Ok(Some(Value::Object(serde_json::Map::new())));
    }
    serde_yaml_ng::from_str(&text).map(Some).map_err(|e| invalid(rel, &e.to_string()))
}

fn read_text(root: &Path, rel: &str) -> Result<Option<String>> {
    crate::paths::read_config(&root.join(rel)).map_err(|source| InitError::Read { file: rel.to_string(), source })
}

fn invalid(rel: &str, why: &str) -> InitError {
    InitError::Unparsable { file: rel.to_string(), why: why.to_string() }
}

/// A directory that holds a project, as vx will see it.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    /// Relative to the root, `/`-separated.
    pub dir: String,
    /// The `package.json` name, if any.
    pub package_name: Option<String>,
    pub has_package_json: bool,
    pub scripts: BTreeMap<String, String>,
}

impl Package {
    /// The name vx infers: the `package.json` name, else the directory name.
    pub(crate) fn vx_name(&self) -> String {
        self.package_name.clone().unwrap_or_else(|| last_component(&self.dir).to_string())
    }
}

/// The last component of a `/`-separated path.
pub(crate) fn last_component(dir: &str) -> &str {
    dir.rsplit('/').next().unwrap_or(dir)
}

/// `package.json` `workspaces`, else `pnpm-workspace.yaml` `packages`.
pub(crate) fn js_workspace_globs(root: &Path) -> Result<Vec<String>> {
    if let Some(ws) = read_package_json(root, root)?.and_then(|p| p.workspaces) {
        return Ok(ws.globs().to_vec());
    }
    Ok(read_pnpm_workspace(root)?.unwrap_or_default())
}

/// The package at `root/dir` (whether or not it has a `package.json`).
pub(crate) fn package_at(root: &Path, dir: &str) -> Result<Package> {
    let pkg = read_package_json(root, &root.join(dir))?;
    Ok(Package {
        dir: dir.to_string(),
        package_name: pkg.as_ref().and_then(|p| p.name.clone()),
        has_package_json: pkg.is_some(),
        scripts: pkg.map(|p| p.scripts).unwrap_or_default(),
    })
}

/// The projects the JavaScript workspace globs match (directories with a
/// `package.json` or `vx.toml`), the root excluded.
pub(crate) fn js_packages(root: &Path, globs: &[String]) -> Result<Vec<Package>> {
    expand_project_globs(root, globs)?
        .into_iter()
        .filter_map(|d| d.strip_prefix(root).ok().map(|r| r.to_string_lossy().replace('\\', "/")))
        .filter(|rel| !rel.is_empty())
        .map(|rel| package_at(root, &rel))
        .collect()
}

/// An array of strings, or one string, as a list; `None` for anything else.
pub(crate) fn strings(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => items.iter().map(|i| i.as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

/// A short description of a JSON value for notes.
pub(crate) fn describe(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 { format!("{}…", text.chars().take(60).collect::<String>()) } else { text }
}

/// `a/b/../c` → `a/c`; `None` when the path climbs above its start.
pub(crate) fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// A workspace-relative path as seen from the project at `dir`: `None` when
/// it lies outside the project.
pub(crate) fn project_relative(dir: &str, workspace_path: &str) -> Option<String> {
    let path = normalize(workspace_path)?;
    if dir.is_empty() || dir == "." {
        return Some(path);
    }
    if path == dir {
        return Some(".".to_string());
    }
    path.strip_prefix(&format!("{dir}/")).map(str::to_string)
}

/// Quotes a word for `sh` when it needs it.
pub(crate) fn sh_quote(word: &str) -> String {
    let safe = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "_-./:,+=@%".contains(c));
    if safe { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_relative_paths() {
        assert_eq!(project_relative("apps/web", "apps/web/dist").as_deref(), Some("dist"));
        assert_eq!(project_relative("apps/web", "dist/apps/web"), None);
        assert_eq!(project_relative("apps/web", "apps/web/../web/x").as_deref(), Some("x"));
        assert_eq!(normalize("../x"), None);
    }
}
