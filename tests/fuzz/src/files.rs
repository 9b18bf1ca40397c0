//! Inputs that are several files: the parts of one input, separated by NUL
//! bytes, are written to fixed paths in order (a workspace's root and
//! project files, a lockfile and the manifests beside it). Text files hold
//! no NUL, so the fuzzer splits and joins files with one byte, and a seed
//! is the files of a real workspace joined with `\0`.

use std::path::Path;

use crate::scratch;

/// Writes the NUL-separated parts of `data` to `names` in a fresh scratch
/// directory (parts past the last name are ignored, missing ones are
/// absent files) and calls `f` with the directory.
pub fn with_files<R>(data: &[u8], names: &[&str], f: impl FnOnce(&Path) -> R) -> R {
    let parts: Vec<(&str, &[u8])> = names.iter().copied().zip(data.split(|&b| b == 0)).collect();
    scratch::with_dir(&parts, f)
}
