//! Git's view of the workspace, for keying without reading clean files:
//! `git status` says which files are modified, untracked or ignored, git's
//! index (read with `gix-index`) gives every clean tracked file's object
//! id, and `.vx/oid-map` turns an object id into the BLAKE3 vx keys by.
//!
//! Why a key is the same as a walk's:
//! - The list: a task's files are the tracked (not deleted) and untracked
//!   paths under its globs' roots, put through the walk's own rules
//!   (`.git`, `.vx`, `node_modules`, nested projects, globs, `.gitignore`
//!   and `.ignore` read directory by directory). Git ignores a file the
//!   walk would take only when their ignore rules differ; `git status
//!   --ignored` names every such path, so a list that would lose one is
//!   not made from git at all ([`Seen::Opaque`]). Global excludes are
//!   turned off for the question (`core.excludesFile`), as the walk never
//!   reads them.
//! - The content: a file git calls clean holds the blob its index entry
//!   names, so the BLAKE3 recorded for that blob is its BLAKE3. A blob's
//!   BLAKE3 is recorded only when vx hashed the file itself and its stat
//!   equals the stat git recorded when it last verified the file, and
//!   that entry is not racily clean (modified in the second the index was
//!   written or later, which git re-checks by content). Modified and
//!   untracked files are hashed through the stat index as on a walk.
//! - Where git's bytes are not the file's (clean/smudge filters, line-end
//!   conversion, `ident`, working-tree encodings), symbolic links kept as
//!   files, sparse or split indexes, `assume-unchanged` and
//!   `skip-worktree` entries, submodules, non-UTF-8 paths, a workspace
//!   that is not the repository's top level, or an index rewritten while
//!   git was asked: no view, and every task is walked.
//!
//! docs/cache.md ("Unchanged trees") is the user's side of this.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Mutex;

/// A blob's identity as git keeps it: object id, and whether it is a
/// symbolic link's target (vx hashes a link's target with a prefix).
pub type BlobId = ([u8; 20], bool);

/// What git says of one path.
#[derive(Debug, Clone, Copy)]
pub enum Seen {
    /// Tracked and unmodified: its blob, and the stat git last verified.
    Clean { blob: BlobId, stat: GitStat },
    /// Modified, staged, conflicted or untracked: hash it.
    Dirty,
    /// Ignored by git (a file, or a directory git did not enter: `dir`),
    /// or an untracked repository inside: git knows nothing of what is
    /// there.
    Opaque { dir: bool },
}

/// The stat fields git keeps per entry (32 bits each, as in the index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct GitStat {
    pub size: u32,
    pub mtime: (u32, u32),
    pub ctime: (u32, u32),
    pub ino: u32,
    /// Modified at or after the index was written: git itself re-checks
    /// such an entry by content, so its stat vouches for nothing.
    pub racy: bool,
}

impl GitStat {
    /// Whether `stat` (vx's `lstat`) is the file git verified.
    pub fn vouches_for(&self, stat: &super::hasher::FileStat) -> bool {
        let split = |ns: i64| ((ns.div_euclid(1_000_000_000)) as u32, (ns.rem_euclid(1_000_000_000)) as u32);
        !self.racy
            && self.size == stat.size as u32
            && self.mtime == split(stat.mtime_ns)
            && self.ctime == split(stat.ctime_ns)
            && self.ino == stat.ino as u32
    }
}

/// `git status` and `git config`, started when the cache opens so they run
/// while the workspace loads; [`Pending::finish`] reads their answers.
#[derive(Debug)]
pub struct Pending {
    root: PathBuf,
    status: Child,
    config: Child,
    /// `.git/index` as it was before git was asked (compared in `view`).
    index_before: Option<IndexStamp>,
}

/// What tells one `.git/index` from the next: git writes a new file and
/// renames it over the old, so the inode changes with every write.
type IndexStamp = (u64, u64, i64);

fn index_stamp(root: &Path) -> Option<IndexStamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(root.join(".git/index")).ok()?;
    Some((m.ino(), m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec()))
}

/// Git's word on every path of the workspace, sorted by path.
#[derive(Debug)]
pub struct GitView {
    paths: Vec<(String, Seen)>,
}

impl Pending {
    /// Starts the questions when `root` is a repository's top level.
    pub fn start(root: &Path) -> Option<Pending> {
        if !root.join(".git").is_dir() {
            return None;
        }
        let index_before = index_stamp(root);
        let git = |args: &[&str]| crate::guard::spawn_tool("git", args, root).ok();
        let status = git(&[
            "--no-optional-locks",
            "-c",
            "core.excludesFile=/dev/null",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=matching",
            "--no-renames",
            "--ignore-submodules=none",
        ])?;
        let config = git(&["config", "-z", "--get-regexp", r"^core\.(autocrlf|symlinks|ignorecase|attributesfile)$"])?;
        Some(Pending { root: root.to_path_buf(), status, config, index_before })
    }

    /// The view, or `None` (with the reason at debug level) when git's
    /// answer cannot stand in for a walk.
    pub fn finish(self) -> Option<GitView> {
        let root = self.root.clone();
        match self.view() {
            Ok(view) => Some(view),
            Err(why) => {
                tracing::debug!("keys from git's index: not used in {}: {why}", root.display());
                None
            }
        }
    }

    fn view(mut self) -> Result<GitView, String> {
        let (_, config) = answer(&mut self.config).map_err(|e| format!("git config: {e}"))?;
        config_allows(&config)?;
        let index = gix_index::File::at(
            self.root.join(".git/index"),
            gix_index::hash::Kind::Sha1,
            true,
            gix_index::decode::Options::default(),
        )
        .map_err(|e| format!("reading .git/index: {e}"))?;
        let (ok, status) = answer(&mut self.status).map_err(|e| format!("git status: {e}"))?;
        if !ok {
            return Err("git status failed".into());
        }
        // git status read the index too: if it changed meanwhile (a `git
        // add` beside the run), the two answers may not be of one index.
        if self.index_before.is_none() || index_stamp(&self.root) != self.index_before {
            return Err("the index changed while git was asked".into());
        }
        let mut paths = index_paths(&index)?;
        merge_status(&mut paths, &status)?;
        let view = GitView { paths };
        view.check_attributes(&self.root)?;
        Ok(view)
    }
}

/// A question's exit and everything it printed.
fn answer(child: &mut Child) -> std::io::Result<(bool, Vec<u8>)> {
    use std::io::Read;
    let mut out = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout.read_to_end(&mut out)?;
    }
    Ok((child.wait()?.success(), out))
}

/// A question never asked to the end (the run needed no key) is stopped
/// and reaped: vx leaves no process behind.
impl Drop for Pending {
    fn drop(&mut self) {
        for child in [&mut self.status, &mut self.config] {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Refuses a configuration under which a file's bytes or kind are not
/// what git's index says.
fn config_allows(out: &[u8]) -> Result<(), String> {
    for item in out.split(|b| *b == 0).filter(|i| !i.is_empty()) {
        let text = String::from_utf8_lossy(item);
        let (name, value) = text.split_once('\n').unwrap_or((&text, ""));
        let value = value.trim().to_ascii_lowercase();
        let on = matches!(value.as_str(), "true" | "yes" | "on" | "1" | "input");
        match name {
            "core.autocrlf" if on => return Err("core.autocrlf converts line ends".into()),
            "core.symlinks" if !on => return Err("core.symlinks is off".into()),
            "core.ignorecase" if on => return Err("core.ignorecase matches ignore rules without case".into()),
            "core.attributesfile" => return Err("core.attributesFile may convert files".into()),
            _ => {}
        }
    }
    Ok(())
}

/// The index's stage-0 entries as clean paths, conflicted ones dirty.
fn index_paths(index: &gix_index::File) -> Result<Vec<(String, Seen)>, String> {
    use gix_index::entry::{Flags, Mode};
    if index.is_sparse() || index.link().is_some() {
        return Err("the index is sparse or split".into());
    }
    let stamp = index.timestamp();
    let mut paths: Vec<(String, Seen)> = Vec::with_capacity(index.entries().len());
    for entry in index.entries() {
        let path = std::str::from_utf8(entry.path(index)).map_err(|_| "a tracked path is not UTF-8".to_string())?;
        if entry.flags.intersects(Flags::ASSUME_VALID | Flags::SKIP_WORKTREE) {
            return Err(format!("`{path}` is assume-unchanged or skip-worktree"));
        }
        if entry.mode == Mode::COMMIT || entry.mode == Mode::DIR {
            return Err(format!("`{path}` is a submodule or sparse directory"));
        }
        if entry.stage_raw() != 0 {
            if paths.last().is_none_or(|(p, _)| p != path) {
                paths.push((path.to_string(), Seen::Dirty));
            }
            continue;
        }
        let mut id = [0; 20];
        id.copy_from_slice(entry.id.as_slice());
        let s = &entry.stat;
        let stat = GitStat {
            size: s.size,
            mtime: (s.mtime.secs, s.mtime.nsecs),
            ctime: (s.ctime.secs, s.ctime.nsecs),
            ino: s.ino,
            racy: s.is_racy(stamp, gix_index::entry::stat::Options::default()),
        };
        paths.push((path.to_string(), Seen::Clean { blob: (id, entry.mode == Mode::SYMLINK), stat }));
    }
    Ok(paths)
}

/// Folds `git status --porcelain=v1 -z` into the index's paths: changed
/// entries become dirty (a deleted one too: an unmerged "deleted by them"
/// may still be on disk, and a dirty path that is not is skipped when
/// listed), untracked and ignored ones join.
fn merge_status(paths: &mut Vec<(String, Seen)>, out: &[u8]) -> Result<(), String> {
    let mut changed = std::collections::HashSet::new();
    let mut extra = Vec::new();
    for record in out.split(|b| *b == 0).filter(|r| r.len() > 3) {
        let (code, path) = record.split_at(3);
        let path = std::str::from_utf8(path).map_err(|_| "a path git reports is not UTF-8".to_string())?;
        match &code[..2] {
            b"??" | b"!!" if path.ends_with('/') => {
                extra.push((path.trim_end_matches('/').to_string(), Seen::Opaque { dir: true }));
            }
            b"??" => extra.push((path.to_string(), Seen::Dirty)),
            b"!!" => extra.push((path.to_string(), Seen::Opaque { dir: false })),
            _ => {
                changed.insert(path);
            }
        }
    }
    for (path, seen) in paths.iter_mut() {
        if changed.contains(path.as_str()) {
            *seen = Seen::Dirty;
        }
    }
    if !extra.is_empty() {
        paths.extend(extra);
        paths.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(())
}

/// Whether one line of a `.gitattributes` file can make a file's bytes
/// differ from its blob: it sets (not unsets) a converting attribute.
fn converts(line: &str) -> bool {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return false;
    }
    line.split_whitespace().skip(1).any(|token| {
        let name = token.split('=').next().unwrap_or(token);
        !name.starts_with(['-', '!'])
            && matches!(name, "text" | "eol" | "crlf" | "filter" | "ident" | "working-tree-encoding")
    })
}

impl GitView {
    /// Refuses a tree whose attributes convert files: every
    /// `.gitattributes` git knows and `.git/info/attributes`.
    fn check_attributes(&self, root: &Path) -> Result<(), String> {
        let mut files = vec![root.join(".git/info/attributes")];
        files.extend(
            self.paths
                .iter()
                .filter(|(p, seen)| {
                    !matches!(seen, Seen::Opaque { .. }) && (p == ".gitattributes" || p.ends_with("/.gitattributes"))
                })
                .map(|(p, _)| root.join(p)),
        );
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            if text.lines().any(converts) {
                return Err(format!("{} converts files", file.display()));
            }
        }
        Ok(())
    }

    /// The paths at or under `dir` (workspace-relative, "" for all): the
    /// path itself when git knows it as a file, else those inside it.
    pub fn under(&self, dir: &str) -> &[(String, Seen)] {
        if dir.is_empty() {
            return &self.paths;
        }
        if let Ok(at) = self.paths.binary_search_by(|(p, _)| p.as_str().cmp(dir)) {
            return &self.paths[at..=at];
        }
        // "c-x" sorts between "c" and "c/d": start at the slash.
        let inside = format!("{dir}/");
        let start = self.paths.partition_point(|(p, _)| p.as_str() < inside.as_str());
        let end = start + self.paths[start..].partition_point(|(p, _)| p.starts_with(&inside));
        &self.paths[start..end]
    }
}

/// BLAKE3s of blobs: `.vx/oid-map`, loaded once, saved when it grew.
#[derive(Debug)]
pub struct OidMap {
    file: PathBuf,
    saved: BlobMap,
    fresh: Mutex<BlobMap>,
}

type BlobMap = HashMap<BlobId, blake3::Hash, std::hash::BuildHasherDefault<ByObjectId>>;

/// A blob's object id is a SHA-1 already: its first eight bytes are as
/// good a table hash as any, and a fully cached run of 100,000 files looks
/// one up per file.
#[derive(Default)]
pub struct ByObjectId {
    hash: u64,
    seeded: bool,
}

impl std::hash::Hasher for ByObjectId {
    fn finish(&self) -> u64 {
        self.hash
    }

    /// The id's bytes come first (the slice's length is not written, see
    /// `write_usize`); the link flag after them only mixes in.
    fn write(&mut self, bytes: &[u8]) {
        if !self.seeded && bytes.len() >= 8 {
            self.hash = u64::from_le_bytes(bytes[..8].try_into().expect("eight bytes"));
            self.seeded = true;
        } else {
            for b in bytes {
                self.hash = self.hash.rotate_left(5) ^ u64::from(*b);
            }
        }
    }

    fn write_usize(&mut self, _length: usize) {}
}

const MAGIC: &[u8] = b"VXOM1\n";
const RECORD: usize = 20 + 1 + 32;

impl OidMap {
    /// Loads `file` when `wanted` (else the map stays empty: only
    /// `monitor = "git"` uses it); a missing, torn or foreign one starts
    /// empty, which only costs reads.
    pub fn load(file: PathBuf, wanted: bool) -> OidMap {
        let read = || std::fs::read(&file).ok().and_then(|bytes| decode(&bytes));
        let saved = wanted.then(read).flatten().unwrap_or_default();
        OidMap { file, saved, fresh: Mutex::default() }
    }

    pub fn get(&self, blob: &BlobId) -> Option<blake3::Hash> {
        self.saved.get(blob).copied().or_else(|| self.fresh.lock().expect("oid map poisoned").get(blob).copied())
    }

    pub fn put(&self, blob: BlobId, hash: blake3::Hash) {
        self.fresh.lock().expect("oid map poisoned").insert(blob, hash);
    }

    /// Writes the map back when this run added to it, keeping only blobs
    /// `view` still names (a map never outgrows the tree).
    pub fn save(&self, view: &GitView) -> std::io::Result<()> {
        let fresh = self.fresh.lock().expect("oid map poisoned");
        if fresh.is_empty() {
            return Ok(());
        }
        let mut out = Vec::with_capacity(MAGIC.len() + RECORD * view.paths.len());
        out.extend_from_slice(MAGIC);
        let mut written = std::collections::HashSet::new();
        for (_, seen) in &view.paths {
            let Seen::Clean { blob, .. } = seen else { continue };
            let Some(hash) = self.saved.get(blob).or_else(|| fresh.get(blob)) else { continue };
            if written.insert(*blob) {
                out.extend_from_slice(&blob.0);
                out.push(u8::from(blob.1));
                out.extend_from_slice(hash.as_bytes());
            }
        }
        super::fsutil::write_atomic(&self.file, &out)
    }
}

fn decode(bytes: &[u8]) -> Option<BlobMap> {
    let body = bytes.strip_prefix(MAGIC)?;
    if !body.len().is_multiple_of(RECORD) {
        return None;
    }
    let mut map = BlobMap::with_capacity_and_hasher(body.len() / RECORD, Default::default());
    for record in body.chunks_exact(RECORD) {
        let id: [u8; 20] = record[..20].try_into().ok()?;
        let hash: [u8; 32] = record[21..].try_into().ok()?;
        map.insert((id, record[20] == 1), blake3::Hash::from_bytes(hash));
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converting_attributes_are_refused_and_unset_ones_are_not() {
        assert!(converts("* text=auto"));
        assert!(converts("*.png filter=lfs diff=lfs merge=lfs -text"));
        assert!(converts("*.c ident"));
        assert!(!converts("*.png -text -diff"));
        assert!(!converts("*.ts linguist-generated=true"));
        assert!(!converts("# * text"));
        assert!(!converts("*.bin binary"));
    }

    #[test]
    fn status_folds_into_the_index() {
        let clean = |n: u8| Seen::Clean {
            blob: ([n; 20], false),
            stat: GitStat { size: 1, mtime: (1, 0), ctime: (1, 0), ino: 1, racy: false },
        };
        let mut paths = vec![("a".to_string(), clean(1)), ("b".to_string(), clean(2)), ("c/d".to_string(), clean(3))];
        merge_status(&mut paths, b" M a\0 D b\0?? c/e\0!! c/x/\0!! c/y.log\0?? n/\0?? c-x\0").unwrap();
        let kinds: Vec<(&str, &str)> = paths
            .iter()
            .map(|(p, s)| {
                let k = match s {
                    Seen::Clean { .. } => "clean",
                    Seen::Dirty => "dirty",
                    Seen::Opaque { dir: true } => "opaque dir",
                    Seen::Opaque { dir: false } => "opaque",
                };
                (p.as_str(), k)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("a", "dirty"),
                ("b", "dirty"),
                ("c-x", "dirty"),
                ("c/d", "clean"),
                ("c/e", "dirty"),
                ("c/x", "opaque dir"),
                ("c/y.log", "opaque"),
                ("n", "opaque dir")
            ]
        );
        let view = GitView { paths };
        let names = |dir: &str| view.under(dir).iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>();
        assert_eq!(names("c"), ["c/d", "c/e", "c/x", "c/y.log"]);
        assert_eq!(names("c/x"), ["c/x"]);
        assert_eq!(names("c-x"), ["c-x"]);
        assert_eq!(names("").len(), 8);
        assert_eq!(names("b"), ["b"], "deleted is dirty: listing skips it when it is not on disk");
    }

    #[test]
    fn blob_ids_spread_over_the_table() {
        use std::hash::BuildHasher;
        let build = std::hash::BuildHasherDefault::<ByObjectId>::default();
        let a = build.hash_one(([1u8; 20], false));
        let b = build.hash_one(([2u8; 20], false));
        let link = build.hash_one(([1u8; 20], true));
        assert!(a != b && a != link && b != link);
    }

    #[test]
    fn a_map_reads_back_what_it_saved_and_refuses_a_torn_file() {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[7; 20]);
        bytes.push(1);
        bytes.extend_from_slice(&[9; 32]);
        let map = decode(&bytes).unwrap();
        assert_eq!(map.get(&([7; 20], true)), Some(&blake3::Hash::from_bytes([9; 32])));
        assert!(decode(&bytes[..bytes.len() - 1]).is_none());
    }
}
