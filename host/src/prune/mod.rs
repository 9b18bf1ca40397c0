//! `vx prune`: a subset of the workspace in a directory of its own, for a
//! Docker build that installs and builds only what some projects need
//! (docs/cli.md, "vx prune"; the model is `turbo prune`).
//!
//! The kept projects are the named ones and everything they depend on
//! (`select`). Into the output go their files (`copy`), the root's
//! `package.json` and `pnpm-workspace.yaml` with literal entries of
//! pruned-away projects removed (`root`), the root files an install or vx
//! reads, and the lockfile cut down to what the kept projects install
//! (`lockfile`). With `--docker` the layout is Turborepo's: `json/` holds
//! only what an install reads (manifests, the lockfile, the package
//! manager's config), `full/` the sources, and the lockfile is also at the
//! top, so a Dockerfile can install from `json/` in a layer that source
//! edits do not invalidate.
//!
//! Everything is computed before anything is written, and the output must
//! be empty or absent: a failed prune leaves no half-written directory of
//! its own, and a second prune never mixes with the first.

mod apply;
mod blocks;
mod copy;
mod json_edit;
mod lockfile;
mod root;
mod select;

pub(crate) use apply::{PruneOptions, prune};
