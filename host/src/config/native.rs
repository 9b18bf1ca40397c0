//! Turborepo's configuration read as configuration. In a workspace with
//! no root `vx.toml`, `turbo.json` (or `turbo.jsonc`) and the packages'
//! own `turbo.json` files are translated in memory, as `vx init` would
//! write them, and loaded as if those `vx.toml` files were on disk, so
//! `vx run build` in a Turborepo repository plans, runs and caches what
//! `turbo run build` does with no migration step. A package's own
//! `vx.toml` still wins for that package. What turbo would refuse when a
//! run includes it (a package file without `extends`, a task depending
//! on itself) is kept as [`Broken`]: an error for the runs that need it.

use std::collections::HashMap;
use std::path::Path;

use super::diag::{Source, toml_error};
use super::error::ConfigError;
use super::raw::RawFile;
use super::translate::{SourceKind, render, translate};

/// A task (or a whole project) the configuration's tool refuses to run:
/// the translation's own record, kept as it is.
pub(crate) use super::translate::Broken;

/// Which files configure the workspace, for `vx info` and the docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ConfigSource {
    /// `vx.toml` files (or none: `package.json` scripts alone).
    #[default]
    Vx,
    /// `vx.toml`, with a turbo file beside it that is not read.
    VxOverTurbo { turbo: String },
    /// The turbo file, translated in memory.
    Turbo { file: String },
}

impl ConfigSource {
    /// One line saying what was read.
    pub fn describe(&self) -> String {
        match self {
            ConfigSource::Vx => "vx.toml".to_string(),
            ConfigSource::VxOverTurbo { turbo } => {
                format!("vx.toml (the {turbo} beside it is not read: vx.toml wins where both are)")
            }
            ConfigSource::Turbo { file } => {
                format!("{file}, read as Turborepo reads it (no root vx.toml; `vx init` writes the translation down)")
            }
        }
    }
}

/// The turbo configuration of `root`, translated.
pub(super) struct Translated {
    pub file: String,
    /// The `vx.toml` text each directory would have (`vx.toml`,
    /// `packages/a/vx.toml`).
    texts: HashMap<String, String>,
    /// The turbo files read, from the root.
    pub read: Vec<String>,
    pub broken: Vec<Broken>,
}

/// Whether `root` holds a turbo file.
pub(super) fn has_turbo(root: &Path) -> Option<&'static str> {
    SourceKind::Turbo.markers().iter().copied().find(|m| root.join(m).is_file())
}

/// Reads and translates `root`'s turbo configuration; `None` without one.
pub(super) fn turbo(root: &Path) -> Result<Option<Translated>, ConfigError> {
    if has_turbo(root).is_none() {
        return Ok(None);
    }
    let plan = translate(root, SourceKind::Turbo).map_err(|e| ConfigError::Translated(Box::new(e.into())))?;
    let texts = render(&plan).into_iter().map(|f| (f.path, f.text)).collect();
    Ok(Some(Translated { file: plan.source, texts, read: plan.read, broken: plan.broken }))
}

impl Translated {
    /// The translated `vx.toml` of the directory `rel_dir` (`.` for the
    /// root), parsed; `None` when the translation has nothing for it.
    pub(crate) fn file(&self, rel_dir: &str) -> Result<Option<(Source, RawFile)>, ConfigError> {
        let path = if rel_dir == "." { "vx.toml".to_string() } else { format!("{rel_dir}/vx.toml") };
        let Some(text) = self.texts.get(&path) else { return Ok(None) };
        let source = Source::new(format!("{} (as {path})", self.file), text.clone());
        let raw: RawFile = toml::from_str(&source.text).map_err(|e| toml_error(&source, &e))?;
        Ok(Some((source, raw)))
    }
}
