//! The parts of the JavaScript ecosystem's files that vx reads:
//! `package.json` (name, scripts, workspace dependencies, `workspaces`)
//! and `pnpm-workspace.yaml` (`packages`). Everything else in them is
//! ignored, since those files belong to other tools.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::diag::{Source, relative_display};
use super::error::{ConfigError, Diagnostic};

#[derive(Debug, Default, Deserialize)]
pub struct PackageJson {
    pub name: Option<String>,
    /// Given to scripts as `npm_package_version`.
    pub version: Option<String>,
    /// `pnpm@9.15.0`: the root's names the manager scripts are told of
    /// (`npm_config_user_agent`).
    #[serde(rename = "packageManager")]
    pub package_manager: Option<String>,
    #[serde(default)]
    pub scripts: BTreeMap<String, String>,
    #[serde(default)]
    pub dependencies: BTreeMap<String, serde_json::Value>,
    #[serde(default, rename = "devDependencies")]
    pub dev_dependencies: BTreeMap<String, serde_json::Value>,
    pub workspaces: Option<Workspaces>,
    /// The digest of the whole file in normal form (key order and
    /// formatting do not count), part of every task's key
    /// (`crate::lockfile::PackageJson`).
    #[serde(skip)]
    pub digest: Option<blake3::Hash>,
}

/// npm and yarn accept a list, yarn 1 also `{ "packages": [...] }`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Workspaces {
    List(Vec<String>),
    Object {
        #[serde(default)]
        packages: Vec<String>,
    },
}

impl Workspaces {
    pub fn globs(&self) -> &[String] {
        match self {
            Workspaces::List(globs) => globs,
            Workspaces::Object { packages } => packages,
        }
    }
}

impl PackageJson {
    /// The names of every package this one depends on, runtime and dev.
    pub fn dependency_names(&self) -> impl Iterator<Item = &str> {
        self.dependencies.keys().chain(self.dev_dependencies.keys()).map(String::as_str)
    }
}

/// Reads `dir/package.json` if there is one.
pub fn read_package_json(root: &Path, dir: &Path) -> Result<Option<PackageJson>, ConfigError> {
    let path = dir.join("package.json");
    let text = match crate::paths::read_config(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let invalid = |e: serde_json::Error| -> ConfigError {
        let location = format!("{}:{}:{}", relative_display(root, &path).display(), e.line(), e.column());
        Diagnostic::new(location, format_args!("invalid package.json: {}", strip_position(&e.to_string())))
            .with_hint("fix the JSON syntax")
            .into()
    };
    let mut pkg: PackageJson = serde_json::from_str(&text).map_err(invalid)?;
    // The typed read above skips what vx does not use; the key takes the
    // whole file, so it is read once more as a value. Both are parses of
    // a small file already in memory.
    pkg.digest = crate::lockfile::PackageJson::from_text(&text).ok().map(|p| p.digest());
    Ok(Some(pkg))
}

#[derive(Debug, Default, Deserialize)]
struct PnpmWorkspace {
    #[serde(default)]
    packages: Vec<String>,
}

/// Reads the `packages` globs of `dir/pnpm-workspace.yaml` if there is one.
pub fn read_pnpm_workspace(root: &Path) -> Result<Option<Vec<String>>, ConfigError> {
    let path = root.join("pnpm-workspace.yaml");
    let text = match crate::paths::read_config(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let source = Source::new("pnpm-workspace.yaml", text);
    match serde_yaml_ng::from_str::<Option<PnpmWorkspace>>(&source.text) {
        Ok(ws) => Ok(Some(ws.unwrap_or_default().packages)),
        Err(e) => {
            let span = e.location().map(|l| l.index()..l.index());
            Err(source.error(span, format!("invalid pnpm-workspace.yaml: {}", strip_position(&e.to_string()))).into())
        }
    }
}

/// serde_json and serde_yaml append " at line L column C"; vx puts the
/// position in front instead, in the same form as every other config error.
fn strip_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}
