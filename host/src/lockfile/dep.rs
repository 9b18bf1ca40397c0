//! One resolved external dependency, as a slice lists it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A package the package manager installed, pinned as its lockfile pins it.
///
/// Ordered by name, then version, then integrity, which is the order of a
/// slice.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ResolvedDep {
    /// The package's own name (for an npm alias, the real package's).
    pub name: String,
    /// The resolved version (`4.17.21`); for a git or file dependency, the
    /// version its manifest declares, or the specifier when none is known.
    pub version: String,
    pub integrity: Integrity,
}

/// What pins a dependency's content.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Integrity {
    /// The lockfile's content hash: an SRI string (`sha512-…`) for npm,
    /// pnpm, yarn classic and bun, yarn berry's `checksum` (`10c0/…`).
    Hash(String),
    /// No hash recorded (git commits, local directories, tarball URLs):
    /// the resolution the manager wrote, which changes when the source does.
    Resolution(String),
    /// Neither: the version is all the lockfile says.
    Absent,
}

impl fmt::Display for ResolvedDep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

impl Integrity {
    /// `Hash` when there is a non-empty hash, else `Resolution` when there is
    /// a non-empty resolution, else `Absent`.
    pub(crate) fn from_parts(hash: Option<&str>, resolution: Option<&str>) -> Self {
        match (hash.filter(|h| !h.is_empty()), resolution.filter(|r| !r.is_empty())) {
            (Some(h), _) => Self::Hash(h.to_string()),
            (None, Some(r)) => Self::Resolution(r.to_string()),
            (None, None) => Self::Absent,
        }
    }
}
