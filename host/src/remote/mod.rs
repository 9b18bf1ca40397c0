//! A REAPI v2 client (the Bazel Remote Execution API): the standard that
//! BuildGrid, bazel-remote, NativeLink, Buildbarn and BuildBuddy speak.
//! vx uses it three ways (docs/remote.md):
//!
//! - the remote cache tier: each vx entry is stored as a real
//!   `ActionResult` under an action digest derived from the vx key, with
//!   write-once uploads and optional HMAC signatures (`entry`, `sign`);
//!   [`ReapiTier`] is the cache's [`Backend`](crate::cache::Backend) over it;
//! - the built-in `remote` executor: a task's inputs as a Merkle tree,
//!   `Execute`, the outputs downloaded into the project (`exec`, `tree`);
//! - `vx worker` (`crate::worker`, a server-side bot kept out of this
//!   client) builds on the connection, the CAS transfers and the trees
//!   exported here.
//!
//! | file | owns |
//! |------|------|
//! | `client` | the connection, headers, deadlines, capabilities, the I/O runtime, [`RemoteError`] |
//! | `digest` | digest functions and ByteStream resource names |
//! | `cas` | FindMissingBlobs, batched and streamed uploads and downloads |
//! | `entry` | a vx cache entry as an `ActionResult`, and back |
//! | `sign` | HMAC signatures over an entry's digests |
//! | `tier` | the remote cache tier: lookups, write-once uploads, refusals |
//! | `tree` | input roots as `Directory` trees, output trees back to files |
//! | `exec` | `Execute` / `WaitExecution` and cancellation |
//!
//! Everything here runs on one small tokio runtime of its own, so callers
//! on the run loop's blocking threads and `vx worker` share one code path.
//! Paths from the server are checked with `crate::paths` before any is
//! written.

mod cas;
mod client;
mod digest;
mod entry;
pub(crate) mod exec;
pub(crate) mod fuzz;
mod sign;
mod tier;
mod tree;

pub(crate) use client::{Reapi, RemoteError, bounded, runtime, stop_calls};
pub(crate) use digest::DigestFn;
pub(crate) use tier::ReapiTier;
pub(crate) use tree::{TreeFile, TreeLink, build};

/// The generated REAPI types, re-exported for the modules here and `vx worker`.
pub(crate) use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
