//! vx — a monorepo task runner.
//!
//! `vx run build` runs every project's `build` in dependency order across the
//! workspace. Data flows one way (DESIGN §1):
//!
//! ```text
//! config → graph → plan → run (executor, under the guard) → report
//! ```
//!
//! | module    | owns |
//! |-----------|------|
//! | [`config`] | finding the workspace root, parsing `vx.toml` / `package.json` strictly, with spans |
//! | [`graph`]  | task ids, the task graph (cycles), selection (`--filter`, `--affected`), the ready-node walker |
//! | [`run`]    | turning a selection into a plan and driving it: concurrency, `--continue`, the local executor |
//! | [`guard`]  | the only place that spawns or signals processes: process groups, sessions, kill ladders |
//! | [`report`] | what the user sees: prefixed task output, colour, the run summary |
//! | [`init`]   | `vx init`: translating turbo.json, Nx and moon configuration into `vx.toml` files |
//! | [`lock`]   | `vx.lock`: the resolved plan, its diff, and refusing credentials |
//! | [`upgrade`] | `vx upgrade`: release metadata, checksums, replacing the binary atomically |
//! | [`cli`]    | argument parsing (clap) and one file per subcommand |
//! | [`cache`]  | the content-hash cache: keys, inputs, the local store, and [`cache::Backend`], the interface of every tier |
//! | [`backends`] | which remote backend a workspace's cache uses: a cache-backend plugin or the REAPI tier |
//! | [`remote`] | the REAPI client: the remote cache tier, remote execution, the pieces `vx worker` builds on |
//! | [`worker`] | `vx worker`: a bot of the Remote Workers API that runs leased actions under the guard |
//! | [`watch`], [`plugin`] | seams for the watch loop and wasm plugins |
//!
//! `graph` knows nothing of processes; `guard` knows nothing of the graph;
//! `run` is where they meet.

pub mod backends;
pub mod cache;
pub mod cli;
pub mod config;
pub mod error;
pub mod events;
pub mod graph;
pub mod guard;
pub mod init;
pub mod lock;
pub mod lockfile;
pub mod paths;
pub mod plugin;
pub mod remote;
pub mod report;
pub mod run;
pub mod sys;
pub mod upgrade;
pub mod watch;
pub mod worker;

pub use error::{Error, ErrorKind, Result};
