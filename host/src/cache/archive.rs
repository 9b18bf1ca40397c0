//! Outputs archives: packing a task's outputs into tar + zstd (mode bits
//! and symbolic links kept) and restoring them.
//!
//! Restoring is defensive, since an entry may come from another machine:
//! every path must be relative and stay inside the project (no `..`, no
//! absolute paths, no writing through a symbolic link), and every link must
//! point inside the project. The whole archive is checked before anything
//! on disk changes; then stale files matching the output globs are removed
//! and the archive is written out. When the files on disk already match
//! the entry, nothing is written at all.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::entry::OutputFile;
use super::hasher::{FileHasher, FileStat};
use super::inputs::{FileRef, GlobFilter, list_files};

/// How a restore went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restored {
    Written,
    /// The outputs on disk already matched; nothing was touched.
    AlreadyThere,
}

/// Packs the files under `project` that match `outputs`.
pub fn pack(project: &Path, outputs: &GlobFilter, hasher: &FileHasher) -> Result<(Vec<u8>, Vec<OutputFile>), String> {
    let files = list_files(project, outputs, None, &[]);
    let encoder = zstd::Encoder::new(Vec::new(), 3).map_err(|e| e.to_string())?;
    let mut tar = tar::Builder::new(encoder);
    let mut listed = Vec::with_capacity(files.len());
    for f in files {
        let stat = stat_of(&f).map_err(|e| format!("{}: {e}", f.rel))?;
        let mut header = tar::Header::new_gnu();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        let mode = stat.perm();
        header.set_mode(mode);
        let hash = hasher.hash_stat(&f.abs, &stat).map_err(|e| format!("{}: {e}", f.rel))?.to_hex().to_string();
        let link = if stat.is_symlink() {
            let target = std::fs::read_link(&f.abs).map_err(|e| format!("{}: {e}", f.rel))?;
            let target = target.to_string_lossy().into_owned();
            check_link(&f.rel, &target)?;
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            tar.append_link(&mut header, &f.rel, &target).map_err(|e| format!("{}: {e}", f.rel))?;
            Some(target)
        } else {
            let file = std::fs::File::open(&f.abs).map_err(|e| format!("{}: {e}", f.rel))?;
            header.set_size(stat.size);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut header, &f.rel, file).map_err(|e| format!("{}: {e}", f.rel))?;
            None
        };
        listed.push(OutputFile { path: f.rel, hash, mode, link });
    }
    let encoder = tar.into_inner().map_err(|e| e.to_string())?;
    let bytes = encoder.finish().map_err(|e| e.to_string())?;
    Ok((bytes, listed))
}

/// One checked archive member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    File { data: Vec<u8>, mode: u32 },
    Link(String),
}

/// Restores `archive` (listing `expected`) into `project`.
pub fn unpack(
    project: &Path,
    outputs: &GlobFilter,
    archive: &[u8],
    expected: &[OutputFile],
    hasher: &FileHasher,
) -> Result<Restored, String> {
    let on_disk = list_files(project, outputs, None, &[]);
    if already_there(&on_disk, expected, hasher) {
        return Ok(Restored::AlreadyThere);
    }
    let members = read_members(archive)?;
    for rel in members.keys() {
        check_no_link_on_the_way(project, rel)?;
    }
    for f in &on_disk {
        std::fs::remove_file(&f.abs).map_err(|e| format!("could not remove stale output {}: {e}", f.rel))?;
    }
    for (rel, member) in members {
        let dest = project.join(&rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{rel}: {e}"))?;
        }
        match member {
            Member::File { data, mode } => {
                std::fs::write(&dest, &data).map_err(|e| format!("{rel}: {e}"))?;
                std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
                    .map_err(|e| format!("{rel}: {e}"))?;
            }
            Member::Link(target) => {
                std::os::unix::fs::symlink(&target, &dest).map_err(|e| format!("{rel}: {e}"))?;
            }
        }
    }
    Ok(Restored::Written)
}

/// The `lstat` the walk took, or a fresh one.
fn stat_of(f: &FileRef) -> std::io::Result<FileStat> {
    match f.stat {
        Some(stat) => Ok(stat),
        None => std::fs::symlink_metadata(&f.abs).map(|m| FileStat::of(&m)),
    }
}

/// Whether the files on disk are the entry's outputs: the same paths, and
/// each the same content and mode (through the stat index, so an unchanged
/// output is neither read nor stat'ed twice).
fn already_there(on_disk: &[FileRef], expected: &[OutputFile], hasher: &FileHasher) -> bool {
    on_disk.len() == expected.len()
        && on_disk.iter().zip(expected).all(|(f, e)| {
            f.rel == e.path
                && stat_of(f).is_ok_and(|stat| {
                    (stat.perm() == e.mode || e.link.is_some())
                        && hasher.hash_stat(&f.abs, &stat).is_ok_and(|h| h.to_hex().as_str() == e.hash)
                })
        })
}

/// Packs members held in memory (a remote hit rebuilt into a local entry),
/// exactly as [`pack`] packs them from disk.
pub fn pack_members(members: &BTreeMap<String, Member>) -> Result<Vec<u8>, String> {
    let encoder = zstd::Encoder::new(Vec::new(), 3).map_err(|e| e.to_string())?;
    let mut tar = tar::Builder::new(encoder);
    for (rel, member) in members {
        check_relative(rel)?;
        let mut header = tar::Header::new_gnu();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        match member {
            Member::File { data, mode } => {
                header.set_mode(*mode);
                header.set_size(data.len() as u64);
                header.set_entry_type(tar::EntryType::Regular);
                tar.append_data(&mut header, rel, data.as_slice()).map_err(|e| format!("{rel}: {e}"))?;
            }
            Member::Link(target) => {
                check_link(rel, target)?;
                header.set_mode(0o777);
                header.set_size(0);
                header.set_entry_type(tar::EntryType::Symlink);
                tar.append_link(&mut header, rel, target).map_err(|e| format!("{rel}: {e}"))?;
            }
        }
    }
    let encoder = tar.into_inner().map_err(|e| e.to_string())?;
    encoder.finish().map_err(|e| e.to_string())
}

/// Decompresses and checks every member before anything is written.
pub fn read_members(archive: &[u8]) -> Result<BTreeMap<String, Member>, String> {
    let decoder = zstd::Decoder::new(archive).map_err(|e| format!("corrupt archive: {e}"))?;
    let mut tar = tar::Archive::new(decoder);
    let mut members = BTreeMap::new();
    for entry in tar.entries().map_err(|e| format!("corrupt archive: {e}"))? {
        let mut entry = entry.map_err(|e| format!("corrupt archive: {e}"))?;
        let path = entry.path().map_err(|e| format!("corrupt archive: {e}"))?.to_string_lossy().into_owned();
        check_relative(&path)?;
        let member = match entry.header().entry_type() {
            tar::EntryType::Regular => {
                let mode = entry.header().mode().map_err(|e| format!("{path}: {e}"))? & 0o7777;
                let mut data = Vec::new();
                entry.read_to_end(&mut data).map_err(|e| format!("corrupt archive: {e}"))?;
                Member::File { data, mode }
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|e| format!("{path}: {e}"))?
                    .ok_or_else(|| format!("{path}: link without a target"))?
                    .to_string_lossy()
                    .into_owned();
                check_link(&path, &target)?;
                Member::Link(target)
            }
            other => return Err(format!("{path}: unsupported archive member type {other:?}")),
        };
        members.insert(path, member);
    }
    Ok(members)
}

/// A member path must be relative and stay inside the project.
pub fn check_relative(path: &str) -> Result<(), String> {
    let p = Path::new(path);
    let ok = !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok { Ok(()) } else { Err(format!("refused archive path `{path}`: it leaves the project")) }
}

/// A link must point inside the project, judged from where it stands.
pub fn check_link(path: &str, target: &str) -> Result<(), String> {
    let refused = || Err(format!("refused link `{path}` → `{target}`: it points outside the project"));
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
pub fn check_no_link_on_the_way(project: &Path, rel: &str) -> Result<(), String> {
    let mut dir = PathBuf::from(project);
    let parts: Vec<_> = Path::new(rel).components().collect();
    for c in &parts[..parts.len().saturating_sub(1)] {
        dir.push(c);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!("refused to restore `{rel}`: `{}` is a symbolic link", dir.display()));
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
}
