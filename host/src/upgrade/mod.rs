//! `vx upgrade`: release metadata from a feed URL, the asset for this
//! platform, its checksums, and replacing the installed binary.
//!
//! Invariants: nothing is written next to the binary until the download is
//! complete and its SHA-256 and/or BLAKE3 match the metadata; the binary is
//! replaced by one `rename` of a fully written, fsynced file in the same
//! directory, so it is never half-written. Every refusal names the URL and
//! what was wrong with it.

mod apply;
mod error;
mod fetch;
mod install;
mod release;

pub(crate) use apply::{check, install_latest};
pub(crate) use fetch::fetch;
pub(crate) use install::{install, install_target};
pub(crate) use release::{Release, is_newer, platform, release_url};
