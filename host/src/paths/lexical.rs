//! Lexical path arithmetic: no filesystem access.

use std::path::{Component, Path, PathBuf};

/// Resolves `.` and `..` lexically, without touching the filesystem (the
/// path may name something that does not exist yet).
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_go_away() {
        assert_eq!(normalize_lexically(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize_lexically(Path::new("a/../../b")), PathBuf::from("b"));
    }
}
