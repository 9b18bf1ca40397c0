//! Reading a workspace configured for Turborepo, Nx or moon as vx
//! configuration: what `vx init` writes (`crate::init`) and what a
//! Turborepo workspace with no `vx.toml` is read as (`super::native`).
//!
//! Each source format has one reader (`turbo`, `nx`, `moon`) that turns its
//! files into a [`Plan`]: the root `[workspace]`, one [`ProjectSpec`] per
//! project, and a [`Note`] for every setting it could not translate. The
//! readers never fail on a setting they do not know: they note it.
//! [`Plan::finish`] then checks every task reference against the tasks the
//! plan (and `package.json` scripts) will define, so the written files load;
//! `render` turns the plan into TOML text. Writing the files is
//! `crate::init`'s.

mod detect;
mod error;
mod model;
mod moon;
mod moon_constraints;
mod moon_task;
mod nx;
mod nx_inputs;
mod render;
mod source;
mod turbo;
mod turbo_task;

pub use detect::SourceKind;
pub(crate) use detect::choose_source;
pub use detect::translate;
pub(crate) use error::InitError;
pub(crate) use model::Broken;
pub use render::render;
pub(crate) use render::{RenderedFile, with_schema_comment};
