//! Paths that come from elsewhere (an archive, a REAPI result, a leased
//! action) and must stay inside the directory they are written into: no
//! absolute paths, no `..`, no link pointing out, no writing through a
//! symbolic link already on disk.
//!
//! The checks are lexical except [`check_no_link_on_the_way`], which looks
//! at what exists on the way; callers check every path before writing any.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused; the text names the path and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("refused archive path `{0}`: it leaves the project")]
    Leaves(String),
    #[error("refused link `{path}` → `{target}`: it points outside the project")]
    LinkLeaves { path: String, target: String },
    #[error("refused to restore `{rel}`: `{}` is a symbolic link", .link.display())]
    ThroughLink { rel: String, link: PathBuf },
}

/// A member path must be relative and stay inside the project.
pub(crate) fn check_relative(path: &str) -> Result<(), PathError> {
    let p = Path::new(path);
    let ok = !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok { Ok(()) } else { Err(PathError::Leaves(path.to_string())) }
}

/// A link must point inside the project, judged from where it stands.
pub(crate) fn check_link(path: &str, target: &str) -> Result<(), PathError> {
    let refused = || Err(PathError::LinkLeaves { path: path.to_string(), target: target.to_string() });
    if Path::new(target).is_absolute() {
        return refused();
    }
    let mut depth: i64 = Path::new(path).components().count() as i64 - 1;
    for c in Path::new(target).components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return refused(),
        }
        if depth < 0 {
            return refused();
        }
    }
    Ok(())
}

/// No existing directory on the way to `rel` may be a symbolic link, or a
/// write could land outside the project.
pub(crate) fn check_no_link_on_the_way(project: &Path, rel: &str) -> Result<(), PathError> {
    let mut dir = PathBuf::from(project);
    let parts: Vec<_> = Path::new(rel).components().collect();
    for c in &parts[..parts.len().saturating_sub(1)] {
        dir.push(c);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(PathError::ThroughLink { rel: rel.to_string(), link: dir });
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_links_must_stay_inside() {
        assert!(check_relative("dist/a.js").is_ok());
        for bad in ["../x", "/etc/passwd", "dist/../../x", ""] {
            assert!(check_relative(bad).is_err(), "{bad}");
        }
        assert!(check_link("dist/a", "b").is_ok());
        assert!(check_link("dist/a", "../src/b").is_ok());
        assert!(check_link("dist/a", "../../x").is_err());
        assert!(check_link("a", "/etc/passwd").is_err());
        assert!(check_link("dist/a", "../../dist/x").is_err(), "leaving and coming back is refused");
    }

    #[test]
    fn refusals_read_as_before() {
        assert_eq!(
            check_relative("../x").unwrap_err().to_string(),
            "refused archive path `../x`: it leaves the project"
        );
        assert_eq!(
            check_link("a", "/etc").unwrap_err().to_string(),
            "refused link `a` → `/etc`: it points outside the project"
        );
    }
}
