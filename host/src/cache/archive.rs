//! Outputs archives: packing a task's outputs into tar + zstd (mode bits
//! and symbolic links kept) and restoring them.
//!
//! Restoring is defensive, since an entry may come from another machine:
//! every path must be relative and stay inside the project (no `..`, no
//! absolute paths, no writing through a symbolic link), and every link must
//! point inside the task's outputs, with no member beneath it. The whole
//! archive is checked before anything on disk changes, and every member
//! must be one the task's outputs match; then stale files matching the
//! output globs are removed (and the directories they leave empty) and
//! the archive is written out through
//! directory handles that never follow a link (`paths::Contained`), files
//! first and links last, so the kernel keeps every write inside the
//! outputs even if a check above were wrong. When the files on disk
//! already match the entry, nothing is written at all. Packing refuses the
//! same links, so an entry that could never be restored is not stored.
//!
//! A restore decompresses the archive twice: once to check every member,
//! once to stream each file to disk. Neither pass holds a file whole, so a
//! restore's memory does not grow with the outputs, however far a hostile
//! archive inflates (a "zstd bomb"); what it writes is bounded by the
//! disk.
//!
//! A task's root-anchored outputs (`outputs = ["/gen/web/**"]`) live
//! outside its project. Their members are named under [`ROOT_MEMBERS`]
//! (tar refuses absolute names, and a name outside the project would be
//! refused on restore) and are restored relative to the workspace root,
//! with the same checks judged from the root. The prefix means the root
//! only for a task that declares root-anchored outputs; for any other it
//! is an ordinary directory of the project, as it always was.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::entry::OutputFile;
use super::tracked::Tracked;
use crate::inputs::{FileHasher, FileRef, FileStat, GlobFilter, Listing, list_files};
use crate::paths::{Contained, PathError, check_link, check_no_link_on_the_way, check_relative};

/// The directory under which an archive names a task's root-anchored
/// outputs: `.vx-root/gen/web/api.ts` is the workspace's `gen/web/api.ts`.
pub(crate) const ROOT_MEMBERS: &str = ".vx-root";

/// Where a task's outputs lie: globs over its project, and root-anchored
/// globs over the workspace root.
#[derive(Debug, Clone, Copy)]
pub struct OutputDirs<'a> {
    /// The workspace root, which git's tracked paths are relative to.
    pub workspace: &'a Path,
    pub project: &'a Path,
    pub globs: &'a GlobFilter,
    pub root: Option<(&'a Path, &'a GlobFilter)>,
}

impl OutputDirs<'_> {
    /// The files the outputs match now, root-anchored ones named under
    /// [`ROOT_MEMBERS`]. A project file under that name would be read back
    /// as a root file, so a task with root-anchored outputs may not have one.
    fn list(&self) -> Result<Vec<FileRef>, ArchiveError> {
        let mut files = list_files(self.project, self.globs, Listing::Outputs, &[]);
        if let Some((root, globs)) = self.root {
            if let Some(f) = files.iter().find(|f| root_member(&f.rel).is_some()) {
                return Err(ArchiveError::Reserved(f.rel.clone()));
            }
            files.extend(list_files(root, globs, Listing::Outputs, &[]).into_iter().map(|mut f| {
                f.rel = format!("{ROOT_MEMBERS}/{}", f.rel);
                f
            }));
        }
        Ok(files)
    }

    /// The files the outputs match now, as `(workspace-relative path,
    /// absolute path)`: what an entry stored now would hold.
    pub fn in_workspace(&self) -> Result<Vec<(String, PathBuf)>, ArchiveError> {
        Ok(self.list()?.into_iter().map(|f| (self.workspace_rel(&f.rel), f.abs)).collect())
    }

    /// A member's path relative to the workspace root.
    fn workspace_rel(&self, member: &str) -> String {
        match root_member(member) {
            Some(inner) => inner.to_string(),
            None => {
                let prefix = self.project.strip_prefix(self.workspace).unwrap_or(Path::new(""));
                prefix.join(member).to_string_lossy().into_owned()
            }
        }
    }

    /// The directory a member is written under, whether that is the root,
    /// and its path there. A member the task's outputs do not match is
    /// refused: a hostile entry could otherwise overwrite the project's
    /// sources (or, through `.vx-root/`, any file of the workspace)
    /// without ever leaving the directory.
    fn locate<'m>(&self, member: &'m str) -> Result<(&Path, bool, &'m str), ArchiveError> {
        let (base, in_root, inner, globs) = match (self.root, root_member(member)) {
            (Some((root, globs)), Some(inner)) => (root, true, inner, globs),
            _ => (self.project, false, member, self.globs),
        };
        if !globs.matches(inner) {
            return Err(ArchiveError::NotAnOutput(member.to_string()));
        }
        Ok((base, in_root, inner))
    }
}

/// The workspace-relative path of a member named under [`ROOT_MEMBERS`].
fn root_member(member: &str) -> Option<&str> {
    member.strip_prefix(ROOT_MEMBERS)?.strip_prefix('/')
}

/// Why an archive could not be made or restored.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The compressor or the tar writer failed.
    #[error("{0}")]
    Encode(std::io::Error),
    /// Reading, writing or listing one member failed.
    #[error("{path}: {source}")]
    File { path: String, source: std::io::Error },
    /// The tar reader's messages may quote the archive's bytes.
    #[error("corrupt archive: {}", crate::error::one_line(&.0.to_string()))]
    Corrupt(std::io::Error),
    #[error("{0}: link without a target")]
    NoLinkTarget(String),
    #[error("{path}: unsupported archive member type {kind:?}")]
    Unsupported { path: String, kind: tar::EntryType },
    #[error("could not remove stale output {path}: {source}")]
    RemoveStale { path: String, source: std::io::Error },
    /// A project output under the name root-anchored outputs are archived as.
    #[error(
        "the output {0} is under `{ROOT_MEMBERS}/`, the name vx archives root-anchored outputs under: rename that directory"
    )]
    Reserved(String),
    #[error("refused archive path `{0}`: the task's outputs do not match it")]
    NotAnOutput(String),
    /// A member beneath a link member would be written through the link.
    #[error("refused archive path `{member}`: it lies beneath the link `{link}`")]
    UnderLink { member: String, link: String },
    /// The restore would remove or write a file git tracks.
    #[error("refused to restore over `{0}`: git tracks it, and vx never overwrites a tracked file")]
    Tracked(String),
    /// A link to something that is not one of the task's outputs.
    #[error("refused link `{path}` → `{target}`: it points outside the task's outputs")]
    LinkLeavesOutputs { path: String, target: String },
    /// vx never archives a path twice; which copy to restore is unclear.
    #[error("corrupt archive: `{0}` is in it twice")]
    Twice(String),
    /// Members are named in UTF-8 with `/` between directories; a file
    /// named otherwise would come back under another name.
    #[error("the output `{0}` has a name vx cannot archive as it is (not UTF-8, or with a backslash): rename it")]
    Unnameable(String),
    /// A member that would land outside the project.
    #[error(transparent)]
    Refused(#[from] PathError),
}

/// The error of member `path` from an I/O error.
fn at(path: &str) -> impl FnOnce(std::io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::File { path: path.to_string(), source }
}

/// Refuses a file whose member name (the listing's UTF-8 spelling of its
/// path, a backslash turned into `/`) no longer ends its real path: restoring it
/// would write a file of another name.
fn check_member_name(f: &FileRef) -> Result<(), ArchiveError> {
    let rel = root_member(&f.rel).unwrap_or(&f.rel);
    if f.abs.ends_with(rel) { Ok(()) } else { Err(ArchiveError::Unnameable(f.rel.clone())) }
}

/// How a restore went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restored {
    Written,
    /// The outputs on disk already matched; nothing was touched.
    AlreadyThere,
}

/// Packs the files the outputs match.
pub(crate) fn pack(dirs: OutputDirs<'_>, hasher: &FileHasher) -> Result<(Vec<u8>, Vec<OutputFile>), ArchiveError> {
    let files = dirs.list()?;
    let encoder = zstd::Encoder::new(Vec::new(), 3).map_err(ArchiveError::Encode)?;
    let mut tar = tar::Builder::new(encoder);
    let mut listed = Vec::with_capacity(files.len());
    let names: std::collections::BTreeSet<String> = files.iter().map(|f| f.rel.clone()).collect();
    for f in files {
        check_member_name(&f)?;
        let stat = stat_of(&f).map_err(at(&f.rel))?;
        let mut header = tar::Header::new_gnu();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        let mode = stat.perm();
        header.set_mode(mode);
        let hash = hasher.hash_stat(&f.abs, &stat).map_err(at(&f.rel))?.to_hex().to_string();
        let link = if stat.is_symlink() {
            let target = std::fs::read_link(&f.abs).map_err(at(&f.rel))?;
            let target = target.into_os_string().into_string().map_err(|_| ArchiveError::Unnameable(f.rel.clone()))?;
            check_link(link_base(&f.rel), &target)?;
            check_link_member(&dirs, &names, &f.rel, &target)?;
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            tar.append_link(&mut header, &f.rel, &target).map_err(at(&f.rel))?;
            Some(target)
        } else {
            let file = crate::paths::open_regular(&f.abs).map_err(at(&f.rel))?;
            header.set_size(stat.size);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut header, &f.rel, file).map_err(at(&f.rel))?;
            None
        };
        listed.push(OutputFile { path: f.rel, hash, mode, link });
    }
    let encoder = tar.into_inner().map_err(ArchiveError::Encode)?;
    let bytes = encoder.finish().map_err(ArchiveError::Encode)?;
    Ok((bytes, listed))
}

/// One checked archive member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    File { data: Vec<u8>, mode: u32 },
    Link(String),
}

/// Restores `archive` (listing `expected`) where the outputs lie.
pub fn unpack(
    dirs: OutputDirs<'_>,
    archive: &[u8],
    expected: &[OutputFile],
    hasher: &FileHasher,
) -> Result<Restored, ArchiveError> {
    let on_disk = dirs.list()?;
    if already_there(&on_disk, expected, hasher) {
        return Ok(Restored::AlreadyThere);
    }
    // First pass: every member's name, kind and link target, checked
    // before anything on disk changes. Data is decompressed and dropped,
    // never held: an archive's size says nothing of what it inflates to.
    let mut names = std::collections::BTreeSet::new();
    let mut links = Vec::new();
    walk(archive, |rel, kind, _| {
        let (base, _, inner) = dirs.locate(&rel)?;
        check_no_link_on_the_way(base, inner)?;
        if !names.insert(rel.clone()) {
            return Err(ArchiveError::Twice(rel));
        }
        if let Kind::Link(target) = kind {
            links.push((rel, target));
        }
        Ok(())
    })?;
    for (rel, target) in &links {
        check_link_member(&dirs, &names, rel, target)?;
    }
    let tracked = Tracked::of(dirs.workspace);
    let doomed = on_disk.iter().map(|f| &f.rel).chain(&names);
    if let Some(rel) = doomed.map(|m| dirs.workspace_rel(m)).find(|rel| tracked.contains(rel)) {
        return Err(ArchiveError::Tracked(rel));
    }
    // The checks above give the clear error; the handles make sure that
    // nothing they missed (or a link swapped in since) is written or
    // removed through a link.
    let open = |dir: &Path| Contained::open(dir).map_err(at(&dir.display().to_string()));
    let project = open(dirs.project)?;
    let root = dirs.root.map(|(root, _)| open(root)).transpose()?;
    let handle = |in_root: bool| match (&root, in_root) {
        (Some(root), true) => root,
        _ => &project,
    };
    for f in &on_disk {
        let (_, in_root, inner) = dirs.locate(&f.rel)?;
        match handle(in_root).remove_file(inner) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            other => other.map_err(|source| ArchiveError::RemoveStale { path: f.rel.clone(), source })?,
        }
        let globs = match (dirs.root, in_root) {
            (Some((_, globs)), true) => globs,
            _ => dirs.globs,
        };
        handle(in_root).remove_empty_parents(inner, globs.root_of(inner));
    }
    // Second pass: each file streams from the decompressor into its place,
    // so a restore holds a buffer, not the outputs. Links come last, once
    // every file is in place, so no member is ever written beneath one.
    walk(archive, |rel, kind, data| match kind {
        Kind::File(mode) => {
            let (_, in_root, inner) = dirs.locate(&rel)?;
            handle(in_root).write_from(inner, data, mode).map_err(at(&rel))
        }
        Kind::Link(_) => Ok(()),
    })?;
    for (rel, target) in &links {
        let (_, in_root, inner) = dirs.locate(rel)?;
        handle(in_root).symlink(inner, target).map_err(at(rel))?;
    }
    Ok(Restored::Written)
}

/// The path a link's target is judged from: a member under
/// [`ROOT_MEMBERS`] stands that much higher (at the workspace root), so
/// its target is judged from there. For a member that is an ordinary
/// project file this is only stricter.
fn link_base(member: &str) -> &str {
    root_member(member).unwrap_or(member)
}

/// A link member may only point inside the task's outputs (a path its
/// output globs match, or a directory holding other members), and no
/// member may lie beneath it. A link from `dist/x` to `../src` stays
/// inside the project, yet restoring `dist/x/main.ts` after it would
/// overwrite a source; and a later run's tools would write through it.
fn check_link_member(
    dirs: &OutputDirs<'_>,
    names: &std::collections::BTreeSet<String>,
    rel: &str,
    target: &str,
) -> Result<(), ArchiveError> {
    let below = format!("{rel}/");
    if let Some(under) = names.range(below.clone()..).next().filter(|n| n.starts_with(&below)) {
        return Err(ArchiveError::UnderLink { member: under.clone(), link: rel.to_string() });
    }
    let (_, in_root, inner) = dirs.locate(rel)?;
    let leaves = || ArchiveError::LinkLeavesOutputs { path: rel.to_string(), target: target.to_string() };
    let parent = Path::new(inner).parent().unwrap_or(Path::new(""));
    let resolved = crate::paths::normalize_lexically(&parent.join(target));
    let resolved = resolved.to_str().ok_or_else(leaves)?;
    let globs = match (dirs.root, in_root) {
        (Some((_, globs)), true) => globs,
        _ => dirs.globs,
    };
    let member = if in_root { format!("{ROOT_MEMBERS}/{resolved}") } else { resolved.to_string() };
    let holds = format!("{member}/");
    let holds_members = names.range(holds.clone()..).next().is_some_and(|n| n.starts_with(&holds));
    if !resolved.is_empty() && (globs.matches(resolved) || holds_members) { Ok(()) } else { Err(leaves()) }
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
pub(crate) fn pack_members(members: &BTreeMap<String, Member>) -> Result<Vec<u8>, ArchiveError> {
    let encoder = zstd::Encoder::new(Vec::new(), 3).map_err(ArchiveError::Encode)?;
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
                tar.append_data(&mut header, rel, data.as_slice()).map_err(at(rel))?;
            }
            Member::Link(target) => {
                check_link(link_base(rel), target)?;
                header.set_mode(0o777);
                header.set_size(0);
                header.set_entry_type(tar::EntryType::Symlink);
                tar.append_link(&mut header, rel, target).map_err(at(rel))?;
            }
        }
    }
    let encoder = tar.into_inner().map_err(ArchiveError::Encode)?;
    encoder.finish().map_err(ArchiveError::Encode)
}

/// A member's kind: a file and its mode bits, or a link and its target.
enum Kind {
    File(u32),
    Link(String),
}

/// Calls `visit` with each member of `archive` in order: its name, its
/// kind and its data (a file's bytes, read or not as `visit` likes). Names
/// and link targets are checked first; a corrupt archive is an error.
fn walk(
    archive: &[u8],
    mut visit: impl FnMut(String, Kind, &mut dyn Read) -> Result<(), ArchiveError>,
) -> Result<(), ArchiveError> {
    let decoder = zstd::Decoder::new(archive).map_err(ArchiveError::Corrupt)?;
    let mut tar = tar::Archive::new(decoder);
    for entry in tar.entries().map_err(ArchiveError::Corrupt)? {
        let mut entry = entry.map_err(ArchiveError::Corrupt)?;
        let path = entry.path().map_err(ArchiveError::Corrupt)?.to_string_lossy().into_owned();
        check_relative(&path)?;
        let kind = match entry.header().entry_type() {
            tar::EntryType::Regular => Kind::File(entry.header().mode().map_err(at(&path))? & 0o7777),
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(at(&path))?
                    .ok_or_else(|| ArchiveError::NoLinkTarget(path.clone()))?
                    .to_string_lossy()
                    .into_owned();
                check_link(link_base(&path), &target)?;
                Kind::Link(target)
            }
            other => return Err(ArchiveError::Unsupported { path, kind: other }),
        };
        visit(path, kind, &mut entry)?;
    }
    Ok(())
}

/// Decompresses and checks every member, holding them in memory (an
/// entry of this machine's store being sent to a remote tier).
pub fn read_members(archive: &[u8]) -> Result<BTreeMap<String, Member>, ArchiveError> {
    let mut members = BTreeMap::new();
    walk(archive, |path, kind, data| {
        let member = match kind {
            Kind::File(mode) => {
                let mut bytes = Vec::new();
                data.read_to_end(&mut bytes).map_err(ArchiveError::Corrupt)?;
                Member::File { data: bytes, mode }
            }
            Kind::Link(target) => Member::Link(target),
        };
        members.insert(path, member);
        Ok(())
    })?;
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (tests/fuzz/regressions/cache_archive): the tar
    /// reader's message quoted the archive's bytes, a newline among them.
    #[test]
    fn a_corrupt_archive_is_a_one_line_error() {
        let tar = include_bytes!("../../../tests/fuzz/regressions/cache_archive/multi-line-tar-error");
        let err = read_members(&zstd::encode_all(&tar[..], 1).unwrap()).unwrap_err().to_string();
        assert!(err.starts_with("corrupt archive: "), "{err:?}");
        assert!(!err.contains(['\n', '\r']), "{err:?}");
    }
}
