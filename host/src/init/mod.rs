//! `vx init`: writing the `vx.toml` files that say what a workspace
//! configured for Turborepo, Nx or moon says. Reading that configuration
//! is `config::translate`'s (so that `config` can read a `turbo.json`
//! without depending on this room); this room writes: it refuses to
//! overwrite, writes each file atomically and loads the result back. The
//! command (`cli/init.rs`) chooses between printing (`--dry`) and writing.

mod write;

pub(crate) use crate::config::translate::{SourceKind, choose_source, render, translate, with_schema_comment};
pub(crate) use write::{check_written, refuse_existing, write_file};
