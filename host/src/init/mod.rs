//! `vx init`: reading a workspace configured for Turborepo, Nx or moon and
//! writing the `vx.toml` files that say the same thing.
//!
//! Each source format has one reader (`turbo`, `nx`, `moon`) that turns its
//! files into a [`Plan`]: the root `[workspace]`, one [`ProjectSpec`] per
//! project, and a [`Note`] for every setting it could not translate. The
//! readers never fail on a setting they do not know: they note it.
//! [`Plan::finish`] then checks every task reference against the tasks the
//! plan (and `package.json` scripts) will define, so the written files load;
//! `render` turns the plan into TOML text. Nothing here writes files: the
//! command (`cli/init.rs`) decides what is written.

mod model;
mod moon;
mod moon_task;
mod nx;
mod nx_inputs;
mod render;
mod source;
mod turbo;

use std::path::Path;

pub use model::{Dep, Note, Plan, ProjectSpec, TaskSpec};
pub use render::{RenderedFile, render};

use crate::error::{Error, Result};

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
        match self {
            SourceKind::Turbo => "turbo.json",
            SourceKind::Nx => "nx.json",
            SourceKind::Moon => ".moon/workspace.yml",
        }
    }

    pub fn parse(name: &str) -> Option<SourceKind> {
        [SourceKind::Turbo, SourceKind::Nx, SourceKind::Moon].into_iter().find(|k| k.name() == name)
    }
}

/// The source formats whose marker file is at `root`.
pub fn detect(root: &Path) -> Vec<SourceKind> {
    [SourceKind::Turbo, SourceKind::Nx, SourceKind::Moon]
        .into_iter()
        .filter(|k| root.join(k.marker()).is_file())
        .collect()
}

/// Reads the workspace at `root` as `kind` and returns the checked plan.
pub fn translate(root: &Path, kind: SourceKind) -> Result<Plan> {
    if !root.join(kind.marker()).is_file() {
        return Err(Error::usage(format!("no {} in {}", kind.marker(), root.display()))
            .with_hint("run `vx init` at the root of the workspace, or pick another --from"));
    }
    let mut plan = match kind {
        SourceKind::Turbo => turbo::read(root)?,
        SourceKind::Nx => nx::read(root)?,
        SourceKind::Moon => moon::read(root)?,
    };
    plan.source = kind.marker().to_string();
    plan.finish();
    Ok(plan)
}
