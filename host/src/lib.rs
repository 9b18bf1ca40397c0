//! vx — a monorepo task runner.
//!
//! `vx run build` runs every project's `build` in dependency order across the
//! workspace. Data flows one way (DESIGN §1; the map in docs/architecture.md):
//!
//! ```text
//! config → graph → plan → run (lifecycle, executors under the guard) ──events──▶ report, history
//! ```
//!
//! | module    | owns |
//! |-----------|------|
//! | `config` | finding the workspace root, parsing `vx.toml` / `package.json` strictly, with spans; editing `vx.toml`; the `[[workspace.boundaries]]` rules over project tags; Turborepo, Nx and moon configuration read as vx's (`translate`) |
//! | `graph`  | task ids, the task graph (cycles), selection (`--filter`, `--affected`), the ready-node walker |
//! | `git`    | what git says: files changed since a revision, a file at a revision, the commit HEAD names |
//! | `plan`   | a selection planned into a task graph (filters, `--affected`, `--shard`, arguments after `--`), `--dry` and its prediction, `vx query` |
//! | `run`    | the engine (slots, admission, `--continue`, signals, servers), one task's lifecycle, the executor seam (`run/exec`: local, plugin, remote) |
//! | `events` | the run-event stream: `Event`, `Subscriber`, `Bus`, task outcomes, and the `tracing` bridge for warnings |
//! | `guard`  | the only place that spawns or signals processes: process groups, sessions, kill ladders |
//! | `sandbox` | `sandbox` on a task: the paths its declarations open, confined by Landlock and a network namespace |
//! | `dashboard` | `vx dashboard`: the local web page over history, its JSON API, the live files of runs in progress |
//! | `session` | a run's consumers built in one place for `vx run`, `vx watch` cycles and `--verify`: the front, history, files, reports, plugins, in the order they need |
//! | `report` | what the user sees, as subscribers: the terminal, the status line, summaries, markdown, GitHub output |
//! | `inputs` | what a task's inputs are and what they hash to: globs, the walk, the stat index, git's index, the file-system monitor's kept lists |
//! | `cache`  | the content-hash cache: keys from the inputs' digests, the local store, and `cache::Backend`, the interface of every tier |
//! | `history` | `.vx/history.db`: its schema and migrations, the recorder, typed queries (ETAs, `vx history`, the dashboard), retention |
//! | `backends` | which remote backend a workspace's cache uses: a cache-backend plugin or the REAPI tier |
//! | `remote` | the REAPI client: the remote cache tier, remote execution, the pieces `vx worker` builds on |
//! | `worker` | `vx worker`: a bot of the Remote Workers API that runs leased actions under the guard |
//! | `plugin` | the wasm host: loading, grants, limits, calls; the adapters of each world; `vx plugin add` |
//! | `watch`  | `vx watch`: file events, debouncing, re-running what a change affects |
//! | `lockfile` | npm, pnpm, yarn and bun lockfiles as per-project dependency slices |
//! | `mcp` | `vx mcp`: the Model Context Protocol server for coding agents |
//! | `paths`  | lexical normalisation and the containment checks shared by cache, remote and worker |
//! | `init`   | `vx init`: writing the `vx.toml` files `config::translate` reads from turbo.json, Nx and moon configuration |
//! | `lock`   | `vx.lock`: the resolved plan, its diff, and refusing credentials |
//! | `upgrade` | `vx upgrade`: release metadata, checksums, replacing the binary atomically |
//! | `cli`    | argument parsing (clap) and one file per subcommand: parse, call one room, print |
//! | `fuzzing`, `bench` | hidden facades: what the fuzz targets and the plugin benchmark drive (docs/architecture.md, "What is public") |
//!
//! `graph` knows nothing of processes; `guard` knows nothing of the graph;
//! `cache` imports neither `remote` nor `plugin`; only `cli`, `report` and
//! `main.rs` print. `run` is where they meet.

// Every room is private to the crate: what is `pub` inside one is reachable
// only through the few re-exports below, so the compiler's `unreachable_pub`
// lint (on for the workspace) keeps everything else `pub(crate)` and dead
// code cannot hide behind a `pub`. The binary needs `main` and
// `die_with_launcher`; the fuzz targets (tests/fuzz) and the plugin benchmark
// (host/benches) reach what they drive through two hidden facades.
mod backends;
mod cache;
mod cli;
mod config;
mod dashboard;
mod error;
mod events;
mod git;
mod graph;
mod guard;
mod history;
mod info;
mod init;
mod inputs;
mod lock;
mod lockfile;
mod mcp;
mod paths;
mod plan;
mod plugin;
mod prune;
mod remote;
mod report;
mod run;
mod sandbox;
mod session;
mod sys;
mod tui;
mod units;
mod upgrade;
mod watch;
mod worker;

#[doc(hidden)]
pub mod bench;
#[doc(hidden)]
pub mod fuzzing;

pub use cli::main;
pub use error::{Error, ErrorKind, Result};
pub use guard::die_with_launcher;
