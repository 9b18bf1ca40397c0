//! Stable digests of what a task's key takes from the lockfile.
//!
//! A slice digest is a hash of its dependencies' hashes, in slice order;
//! each dependency's hash covers its name, version and integrity, every
//! field length-prefixed so no two collide by concatenation. Two levels
//! let a `Lockfile` hash each distinct pin once per parse, however many
//! slices hold it. It does not cover which manager wrote the lockfile: the
//! same pins are the same installed code. The fallback for a lockfile vx
//! cannot read is the whole file's bytes, domain-separated from slices.

use std::fmt;
use std::io::Read;
use std::path::Path;

use super::{Integrity, LockfileError, ResolvedDep};

/// A blake3 digest of a project's external dependencies, or of a whole
/// lockfile when it could not be sliced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DepsDigest(pub blake3::Hash);

impl fmt::Display for DepsDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.to_hex().as_str())
    }
}

const DEP_DOMAIN: &str = "vx lockfile dependency v1";
const SLICE_DOMAIN: &str = "vx lockfile slice v1";
const WHOLE_DOMAIN: &str = "vx lockfile whole v1";

/// The digest of a slice. Callers pass slices as `Lockfile::slice` returns
/// them (sorted); the digest does not sort again.
#[cfg(test)]
pub(crate) fn slice_digest<'a>(deps: impl IntoIterator<Item = &'a ResolvedDep>) -> DepsDigest {
    let hashes: Vec<[u8; 32]> = deps.into_iter().map(dep_hash).collect();
    combine(hashes.iter())
}

/// One dependency's hash, the unit a slice digest is made of.
pub(crate) fn dep_hash(dep: &ResolvedDep) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(DEP_DOMAIN);
    field(&mut h, dep.name.as_bytes());
    field(&mut h, dep.version.as_bytes());
    match &dep.integrity {
        Integrity::Hash(hash) => {
            h.update(b"h");
            field(&mut h, hash.as_bytes());
        }
        Integrity::Resolution(resolution) => {
            h.update(b"r");
            field(&mut h, resolution.as_bytes());
        }
        Integrity::Absent => {
            h.update(b"-");
        }
    }
    *h.finalize().as_bytes()
}

/// The slice digest of dependencies' hashes, in order. They are gathered
/// into one buffer first: one large blake3 update is several times faster
/// than hundreds of small ones.
pub(crate) fn combine<'a>(hashes: impl Iterator<Item = &'a [u8; 32]>) -> DepsDigest {
    let buf: Vec<u8> = hashes.flatten().copied().collect();
    let mut h = blake3::Hasher::new_derive_key(SLICE_DOMAIN);
    h.update(&buf);
    DepsDigest(h.finalize())
}

/// The digest of a lockfile's bytes, streamed (bounded memory whatever its
/// size), for a lockfile that `Lockfile::find_and_parse` could not read.
pub(crate) fn whole_file_digest(path: &Path) -> Result<DepsDigest, LockfileError> {
    let read_error = |source| LockfileError::Read { path: path.to_path_buf(), source };
    let mut file = crate::paths::open_regular(path).map_err(read_error)?;
    let mut h = blake3::Hasher::new_derive_key(WHOLE_DOMAIN);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).map_err(read_error)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(DepsDigest(h.finalize()))
}

fn field(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testutil::ScratchDir;

    fn dep(name: &str, version: &str, integrity: Integrity) -> ResolvedDep {
        ResolvedDep { name: name.into(), version: version.into(), integrity }
    }

    #[test]
    fn every_field_counts_and_fields_do_not_run_together() {
        let base = [dep("ab", "1", Integrity::Hash("x".into()))];
        let d = slice_digest(&base);
        assert_eq!(d, slice_digest(&base.clone()));
        assert_ne!(d, slice_digest(&[dep("a", "b1", Integrity::Hash("x".into()))]));
        assert_ne!(d, slice_digest(&[dep("ab", "2", Integrity::Hash("x".into()))]));
        assert_ne!(d, slice_digest(&[dep("ab", "1", Integrity::Hash("y".into()))]));
        assert_ne!(d, slice_digest(&[dep("ab", "1", Integrity::Resolution("x".into()))]));
        assert_ne!(d, slice_digest(&[dep("ab", "1", Integrity::Absent)]));
        assert_ne!(d, slice_digest(&[]));
    }

    #[test]
    fn a_whole_file_digest_is_not_a_slice_digest_of_anything() {
        let dir = ScratchDir::new("whole");
        let path = dir.write("yarn.lock", b"");
        let whole = whole_file_digest(&path).expect("digest");
        assert_ne!(whole, slice_digest(&[]));
        std::fs::write(&path, b"x").expect("write");
        assert_ne!(whole, whole_file_digest(&path).expect("digest"));
        let missing = whole_file_digest(&dir.path().join("nope")).unwrap_err();
        assert_eq!(missing.files(), [dir.path().join("nope").as_path()]);
    }
}
