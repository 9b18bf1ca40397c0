//! What a task's inputs are and what they hash to: the walk of its input
//! files (globs, ignore files, nested projects, links), their digests
//! through a stat index or git's index, and the lists a file-system
//! monitor lets a run reuse. The cache keys a task from these digests; it
//! imports this room, and this room knows nothing of keys or stores.
//!
//! The glob matchers are here too, a leaf for every room that asks
//! whether a path is one of a task's inputs or outputs (`--affected`,
//! `vx watch`, the sandbox's tracer, remote execution), so none of them
//! needs the cache to ask.
//!
//! | file | owns |
//! |------|------|
//! | `fingerprints` | [`Fingerprints`]: one invocation's listing and hashing of its tasks' inputs, and what it shares between them |
//! | `glob` | [`GlobFilter`]: a compiled glob list and the literal prefixes a walk enters |
//! | `anchored` | root-anchored (`/…`) input and output globs split from project-relative ones; [`InputMatcher`] |
//! | `walk` | which files are a task's inputs, and which are its outputs on disk |
//! | `ignores` | `.gitignore`, `.ignore` and `.git/info/exclude` as a walk reads them |
//! | `runs` | the sorted runs of a walk's threads and their merge |
//! | `hashing` | listed files hashed into a key's digests, on several threads |
//! | `hasher` | BLAKE3 of files, the stat index under `.vx/` |
//! | `gitview` | keys of clean files from git's index and `.vx/oid-map` |
//! | `monitor` | input lists kept between runs while a file-system monitor says nothing changed |
//! | `watchman` | asking watchman what changed since a clock |
//! | `absent` | whether a file that is not on disk would be one of a task's inputs (`--download`) |
//! | `links` | inputs reached through links out of the workspace, said once |
//! | `error` | [`InputError`] |

mod absent;
mod anchored;
mod error;
mod fingerprints;
mod gitview;
mod glob;
mod hasher;
mod hashing;
mod ignores;
mod links;
mod monitor;
mod runs;
mod walk;
mod watchman;

pub(crate) use anchored::{InputMatcher, OutputGlobs};
pub(crate) use error::InputError;
pub(crate) use fingerprints::Fingerprints;
pub use glob::GlobFilter;
pub(crate) use glob::{GlobError, unmatched_inputs};
pub use hasher::FileHasher;
pub(crate) use hasher::FileStat;
pub(crate) use ignores::ignore_file;
pub(crate) use walk::{FileRef, Listing, list_files};
