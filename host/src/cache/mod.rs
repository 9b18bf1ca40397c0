//! The content-hash cache (DESIGN §4): keys, the local store of verified
//! entries, outputs archives and log replay. It knows nothing of
//! scheduling: the run loop asks for a task's key, looks it up, restores a
//! hit, and stores a successful run. What a task's input files are and
//! what they hash to is `crate::inputs`'s ([`Cache::inputs`]); a key is
//! made from those digests here.
//!
//! It knows nothing of plugins or REAPI either: a remote tier is any
//! [`Backend`] (a store of encoded entries by key), built by
//! `crate::backends` from the workspace's configuration and handed to
//! [`Cache::open`]. Every entry, from whichever tier, is verified here.
//!
//! | file | owns |
//! |------|------|
//! | `key` | the key recipe and its manifest |
//! | `entry` | the on-disk entry format and its verification |
//! | `store` | the local store: atomic writes, verified reads, retention |
//! | `backend` | [`Backend`], the interface of every tier, and the local store as one |
//! | `remote` | the remote tier: a backend, its failures counted, its warnings |
//! | `archive` | outputs as tar + zstd, and their defensive restore |
//! | `clear` | old outputs removed before a task executes |
//! | `build_state` | a tool's incremental state written outside the outputs (`.tsbuildinfo`) |
//! | `tracked` | the files git tracks, which outputs never remove or overwrite |
//! | `deps` | what keys take from `package.json` and the lockfile, memoised |
//! | `mode` | `--cache` access per tier |
//! | `runtime` | runtime inputs: each command run once, its output for keys |
//! | `diff` | which key components changed between two runs (`vx why`) |
//! | `error` | [`CacheError`] and the conversions into [`crate::Error`] |
//! | `open` | [`Cache`]: opened for an invocation, finished with retention |
//! | `keying` | a task's key from its inputs' digests, and whether they still hold |
//! | `lookup` | a key looked up in the local store, then the remote tier |
//! | `outputs` | a hit's outputs restored, a success's stored |

pub(crate) mod archive;
mod backend;
mod build_state;
mod clear;
mod deps;
mod diff;
mod entry;
mod error;
mod key;
mod keying;
mod lookup;
mod mode;
mod open;
mod outputs;
mod remote;
mod runtime;
mod store;
mod tracked;

pub use archive::read_members;
pub(crate) use archive::{Member, ROOT_MEMBERS, Restored, pack_members};
pub(crate) use backend::{Backend, BackendError, PROBE_KEY};
pub(crate) use build_state::BuildState;
pub(crate) use clear::clear_outputs;
pub(crate) use deps::{DepsTable, LockPart};
pub use diff::diff_manifests;
pub(crate) use diff::{Change, diff_explained};
pub use entry::Entry;
pub(crate) use entry::EntryHeader;
pub(crate) use error::CacheError;
pub use key::CacheKey;
pub(crate) use key::{KeyInputs, KeyManifest};
pub(crate) use lookup::Tier;
pub(crate) use mode::CacheMode;
pub(crate) use open::{Cache, state_dir};
pub(crate) use outputs::output_files;
pub(crate) use remote::RemoteTier;
pub(crate) use runtime::RuntimeProbes;
pub(crate) use store::{CleanError, LocalStore, Lookup, StoreStats};
