//! Which tool a workspace was configured for ([`SourceKind`], by its
//! marker files), and reading it as that tool's into a checked plan.

use std::path::Path;

use super::error::{InitError, Result};
use super::model::Plan;
use super::{moon, nx, turbo};

/// The tool a workspace was configured for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Turbo,
    Nx,
    Moon,
}

impl SourceKind {
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Turbo => "turbo",
            SourceKind::Nx => "nx",
            SourceKind::Moon => "moon",
        }
    }

    /// The file whose presence marks a workspace of this kind.
    pub fn marker(self) -> &'static str {
        self.markers()[0]
    }

    /// Every file that marks a workspace of this kind (turbo reads
    /// `turbo.jsonc` as well as `turbo.json`).
    pub fn markers(self) -> &'static [&'static str] {
        match self {
            SourceKind::Turbo => &["turbo.json", "turbo.jsonc"],
            SourceKind::Nx => &["nx.json"],
            SourceKind::Moon => &[".moon/workspace.yml"],
        }
    }

    fn present(self, root: &Path) -> bool {
        self.markers().iter().any(|m| root.join(m).is_file())
    }

    pub const ALL: [SourceKind; 3] = [SourceKind::Turbo, SourceKind::Nx, SourceKind::Moon];
}

/// The source formats whose marker file is at `root`.
pub(crate) fn detect(root: &Path) -> Vec<SourceKind> {
    SourceKind::ALL.into_iter().filter(|k| k.present(root)).collect()
}

/// The source to read: `from` when given, else the one format present.
pub(crate) fn choose_source(root: &Path, from: Option<SourceKind>) -> Result<SourceKind> {
    if let Some(kind) = from {
        return Ok(kind);
    }
    match detect(root)[..] {
        [kind] => Ok(kind),
        [] => Err(InitError::NoSource { root: root.to_path_buf() }),
        ref several => Err(InitError::SeveralSources { markers: several.iter().map(|k| k.marker()).collect() }),
    }
}

/// Reads the workspace at `root` as `kind` and returns the checked plan.
pub fn translate(root: &Path, kind: SourceKind) -> Result<Plan> {
    if !kind.present(root) {
        return Err(InitError::NoMarker { marker: kind.marker(), root: root.to_path_buf() });
    }
    let mut plan = match kind {
        SourceKind::Turbo => turbo::read(root)?,
        SourceKind::Nx => nx::read(root)?,
        SourceKind::Moon => moon::read(root)?,
    };
    if plan.source.is_empty() {
        plan.source = kind.marker().to_string();
    }
    plan.finish();
    Ok(plan)
}
