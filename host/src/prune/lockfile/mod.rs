//! The pruned lockfile: the workspace's own lockfile, found as vx finds it
//! for keys (`crate::lockfile::find_lockfile`), with the entries only
//! pruned-away projects needed cut out of its text. What is kept is the
//! package manager's own text, byte for byte, so a frozen install agrees
//! with it. One writer per format: `npm` (v2, v3), `pnpm` (9.0), `berry`
//! (yarn 2 and later) and `bun` (text `bun.lock`); yarn classic, pnpm 6.0
//! and the binary `bun.lockb` are refused with a one-line error.

mod berry;
mod bun;
mod npm;
mod pnpm;
mod pruned;

pub(in crate::prune) use pruned::prune_lockfile;
