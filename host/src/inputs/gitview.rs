//! Git's index as a second stat index, for keying without reading clean
//! files: a file whose `lstat` equals the stat git recorded for it when it
//! last verified it (and that entry is not racily clean) holds the blob
//! the entry names, and `.vx/oid-map` turns that blob's object id into the
//! BLAKE3 vx keys by. Read with `gix-index`; git itself is only asked for
//! its configuration.
//!
//! Why a key is the same as a walk's:
//! - The list is the walk's own ([`super::walk::list_files`]): git is
//!   never asked which files there are, so its ignore rules, untracked
//!   files and nested repositories do not matter.
//! - The content: git's index is a stat cache with the same contract as
//!   vx's own (`super::hasher`). An entry's stat is the one git saw when
//!   it wrote or hashed the file; a file changed since has another stat,
//!   unless it changed within the tick the index was written, which is
//!   what racily clean means and such entries are not trusted. A file
//!   git's stat does not vouch for (modified, untracked, conflicted,
//!   `assume-unchanged`, `skip-worktree`, a link where git has a file) is
//!   hashed through vx's stat index, as on a walk.
//! - The map: a blob's BLAKE3 is recorded only from a file git's stat
//!   vouched for, and only when the file's stat was still the same after
//!   vx read it.
//! - Where git's bytes are not the file's (clean/smudge filters, line-end
//!   conversion, `ident`, working-tree encodings, named by a tracked
//!   `.gitattributes`, `.git/info/attributes`, `core.autocrlf` or
//!   `core.attributesFile`), a split index, or a workspace that is not the
//!   repository's top level: no view, and every file is hashed as on a
//!   walk.
//!
//! docs/cache.md ("With git's index") is the user's side of this.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread::JoinHandle;

use gix_index::entry::{Flags, Mode};

use super::hasher::FileStat;

/// A blob's identity as git keeps it: object id, and whether it is a
/// symbolic link's target (vx hashes a link's target with a prefix).
pub(crate) type BlobId = ([u8; 20], bool);

/// Whether git's entry vouches for `stat` (vx's `lstat`): the stat fields
/// git keeps (32 bits each) are the same, and the entry is not racily
/// clean (modified at or after the index was written: git itself re-checks
/// such an entry by content, so its stat vouches for nothing).
fn vouches_for(entry: &gix_index::Entry, index: &gix_index::File, stat: &FileStat) -> bool {
    let split = |ns: i64| ((ns.div_euclid(1_000_000_000)) as u32, (ns.rem_euclid(1_000_000_000)) as u32);
    let git = &entry.stat;
    !git.is_racy(index.timestamp(), gix_index::entry::stat::Options::default())
        && git.size == stat.size as u32
        && (git.mtime.secs, git.mtime.nsecs) == split(stat.mtime_ns)
        && (git.ctime.secs, git.ctime.nsecs) == split(stat.ctime_ns)
        && git.ino == stat.ino as u32
}

/// Git's view being made on a thread from when the cache opens (`git
/// config` asked, `.git/index` and `.vx/oid-map` read, attributes
/// checked); [`Pending::finish`] takes it.
#[derive(Debug)]
pub(crate) struct Pending {
    root: PathBuf,
    thread: Option<JoinHandle<Result<GitView, String>>>,
}

/// How far past the last entry found a look-up tries before it searches:
/// a task's globs or ignore files may skip a few tracked files between
/// two it takes.
const LOOK_AHEAD: usize = 8;

/// Git's index and the blobs' BLAKE3s, once read and found usable.
#[derive(Debug)]
pub(crate) struct GitView {
    root: PathBuf,
    index: gix_index::File,
    oids: OidMap,
}

impl Pending {
    /// Starts reading when `root` is a repository's top level; `oid_map`
    /// is where the blobs' BLAKE3s are kept.
    pub(crate) fn start(root: &Path, oid_map: PathBuf) -> Option<Pending> {
        if !root.join(".git").is_dir() {
            return None;
        }
        let dir = root.to_path_buf();
        let thread = std::thread::Builder::new().name("vx-git-index".into()).spawn(move || view(dir, oid_map));
        Some(Pending { root: root.to_path_buf(), thread: thread.ok() })
    }

    /// The view, or `None` (with the reason at debug level) when git's
    /// index cannot vouch for files here.
    pub(crate) fn finish(mut self) -> Option<GitView> {
        let made = match self.thread.take() {
            Some(thread) => thread.join().unwrap_or_else(|_| Err("reading .git/index failed".into())),
            None => Err("could not start reading .git/index".into()),
        };
        made.map_err(|why| tracing::debug!("keys from git's index: not used in {}: {why}", self.root.display())).ok()
    }
}

/// A view never asked for (the run needed no key) is still waited for:
/// the thread may be running `git config`, and vx leaves no process
/// behind.
impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Asks git's configuration, reads the index and the map, and refuses
/// what cannot stand in for reading files.
fn view(root: PathBuf, oid_map: PathBuf) -> Result<GitView, String> {
    let config =
        crate::guard::run_tool("git", &["config", "--list", "-z"], &root).map_err(|e| format!("git config: {e}"))?;
    if !config.success {
        return Err(format!("git config failed: {}", config.stderr.trim()));
    }
    config_allows(&config.stdout)?;
    let index = gix_index::File::at(
        root.join(".git/index"),
        gix_index::hash::Kind::Sha1,
        true,
        gix_index::decode::Options::default(),
    )
    .map_err(|e| format!("reading .git/index: {e}"))?;
    if index.link().is_some() {
        return Err("the index is split".into());
    }
    check_attributes(&root, &index)?;
    Ok(GitView { root, index, oids: OidMap::load(oid_map) })
}

/// Refuses a configuration (`git config --list -z`: `name\nvalue` items,
/// a bare `name` for true, the last of a name winning) under which a
/// file's bytes are not what git's index says.
fn config_allows(out: &str) -> Result<(), String> {
    let (mut autocrlf, mut attributes_file) = (false, false);
    for item in out.split('\0').filter(|i| !i.is_empty()) {
        let (name, value) = item.split_once('\n').unwrap_or((item, "true"));
        match name {
            "core.autocrlf" => {
                autocrlf = matches!(value.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1" | "input");
            }
            "core.attributesfile" => attributes_file = !value.trim().is_empty(),
            _ => {}
        }
    }
    if autocrlf {
        return Err("core.autocrlf converts line ends".into());
    }
    if attributes_file {
        return Err("core.attributesFile may convert files".into());
    }
    Ok(())
}

/// Refuses a tree whose attributes convert files: every `.gitattributes`
/// the index tracks, the root's own (tracked or not) and
/// `.git/info/attributes`.
fn check_attributes(root: &Path, index: &gix_index::File) -> Result<(), String> {
    let mut files = vec![root.join(".git/info/attributes"), root.join(".gitattributes")];
    for entry in index.entries() {
        let path: &[u8] = entry.path(index).as_ref();
        if path.ends_with(b"/.gitattributes") {
            files.push(root.join(std::ffi::OsStr::from_bytes(path)));
        }
    }
    for file in files {
        let Ok(text) = crate::paths::read_regular_string(&file, crate::paths::CONFIG_LIMIT) else { continue };
        if text.lines().any(converts) {
            return Err(format!("{} converts files", file.display()));
        }
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

fn object_id(entry: &gix_index::Entry) -> [u8; 20] {
    let mut id = [0; 20];
    id.copy_from_slice(entry.id.as_slice());
    id
}

impl GitView {
    /// The blob git verified for the file at `abs`, whose `lstat` is
    /// `stat`: its entry is at stage 0, not `assume-unchanged` or
    /// `skip-worktree`, of the same kind (link or file), and its recorded
    /// stat vouches for this one.
    ///
    /// `next` is where to look first: a sorted list's next file is most
    /// often the entry after the last one found (or a few further), which
    /// costs a compare of memory already at hand instead of a search.
    fn blob_for(&self, abs: &Path, stat: &FileStat, next: &mut usize) -> Option<BlobId> {
        let rel = abs.as_os_str().as_bytes().strip_prefix(self.root.as_os_str().as_bytes())?.strip_prefix(b"/")?;
        let entries = self.index.entries();
        let ahead = entries.get(*next..).unwrap_or_default().iter().take(LOOK_AHEAD);
        let at = match ahead.map(|e| e.path(&self.index)).position(|path| path == rel) {
            Some(step) => *next + step,
            None => self.index.entry_index_by_path(rel.into()).ok()?,
        };
        *next = at + 1;
        let entry = &entries[at];
        if entry.stage_raw() != 0 || entry.flags.intersects(Flags::ASSUME_VALID | Flags::SKIP_WORKTREE) {
            return None;
        }
        let link = entry.mode == Mode::SYMLINK;
        let file = entry.mode == Mode::FILE || entry.mode == Mode::FILE_EXECUTABLE;
        let same_kind = if link { stat.is_symlink() } else { file && stat.is_file() };
        (same_kind && vouches_for(entry, &self.index, stat)).then(|| (object_id(entry), link))
    }

    /// The BLAKE3 of the file at `abs` (its `lstat` is `stat`) when git's
    /// index vouches for it as a blob whose BLAKE3 is known; otherwise
    /// `hash` hashes it, and the result is kept for the blob when git
    /// vouched for the file and it did not change while it was read.
    /// `next` as for [`GitView::blob_for`].
    pub(crate) fn hash(
        &self,
        abs: &Path,
        stat: &FileStat,
        next: &mut usize,
        hash: impl FnOnce() -> std::io::Result<blake3::Hash>,
    ) -> std::io::Result<blake3::Hash> {
        let Some(blob) = self.blob_for(abs, stat, next) else { return hash() };
        if let Some(known) = self.oids.get(&blob) {
            return Ok(known);
        }
        let hashed = hash()?;
        if std::fs::symlink_metadata(abs).is_ok_and(|m| FileStat::of(&m) == *stat) {
            self.oids.put(blob, hashed);
        }
        Ok(hashed)
    }

    /// Writes `.vx/oid-map` back when this run added to it.
    pub(crate) fn save(&self) -> std::io::Result<()> {
        self.oids.save(&self.index)
    }
}

/// BLAKE3s of blobs: `.vx/oid-map`, read once, saved when it grew.
///
/// The file is its records sorted by blob (object id, then the link flag),
/// searched where it was read, through a fan-out table of where each
/// two-byte id prefix starts (as git's pack indexes have): a look-up reads
/// the table and one or two records. Loading is one pass over the file; a
/// hash table of 100,000 blobs cost more to build than the look-ups it
/// served.
#[derive(Debug)]
pub(crate) struct OidMap {
    file: PathBuf,
    /// Records of the file, checked and sorted (empty when it was not).
    saved: Vec<u8>,
    /// `fan[p]..fan[p + 1]`: the records whose id starts with the two
    /// bytes `p`.
    fan: Vec<u32>,
    fresh: Mutex<HashMap<BlobId, blake3::Hash>>,
}

const MAGIC: &[u8] = b"VXOM2\n";
const RECORD: usize = 20 + 1 + 32;

/// A record's sort key: object id and link flag.
fn record_key(record: &[u8]) -> &[u8] {
    &record[..21]
}

fn blob_key(blob: &BlobId) -> [u8; 21] {
    let mut key = [0; 21];
    key[..20].copy_from_slice(&blob.0);
    key[20] = u8::from(blob.1);
    key
}

fn prefix(key: &[u8]) -> usize {
    usize::from(u16::from_be_bytes([key[0], key[1]]))
}

impl OidMap {
    /// Reads `file`; a missing, torn, unsorted or foreign one starts
    /// empty, which only costs reads.
    fn load(file: PathBuf) -> OidMap {
        let saved =
            crate::paths::read_regular(&file, crate::paths::STATE_LIMIT).ok().and_then(decode).unwrap_or_default();
        OidMap::of(file, saved)
    }

    fn of(file: PathBuf, saved: Vec<u8>) -> OidMap {
        let mut fan = vec![0u32; (1 << 16) + 1];
        for record in saved.chunks_exact(RECORD) {
            fan[prefix(record) + 1] += 1;
        }
        for p in 1..fan.len() {
            fan[p] += fan[p - 1];
        }
        OidMap { file, saved, fan, fresh: Mutex::default() }
    }

    fn find(&self, blob: &BlobId) -> Option<blake3::Hash> {
        let key = blob_key(blob);
        let p = prefix(&key);
        let (start, end) = (self.fan[p] as usize, self.fan[p + 1] as usize);
        let bucket = self.saved.get(start * RECORD..end * RECORD)?;
        let at = bucket.chunks_exact(RECORD).position(|record| record_key(record) == key)?;
        let record = &bucket[at * RECORD..(at + 1) * RECORD];
        Some(blake3::Hash::from_bytes(record[21..].try_into().expect("32 bytes")))
    }

    fn get(&self, blob: &BlobId) -> Option<blake3::Hash> {
        self.find(blob).or_else(|| self.fresh.lock().expect("oid map poisoned").get(blob).copied())
    }

    fn put(&self, blob: BlobId, hash: blake3::Hash) {
        self.fresh.lock().expect("oid map poisoned").insert(blob, hash);
    }

    /// Writes the map back when this run added to it, keeping only blobs
    /// `index` still names (a map never outgrows the tree).
    fn save(&self, index: &gix_index::File) -> std::io::Result<()> {
        let fresh = self.fresh.lock().expect("oid map poisoned");
        if fresh.is_empty() {
            return Ok(());
        }
        let mut records: Vec<[u8; RECORD]> = Vec::with_capacity(index.entries().len());
        for entry in index.entries() {
            let blob = (object_id(entry), entry.mode == gix_index::entry::Mode::SYMLINK);
            let Some(hash) = self.find(&blob).or_else(|| fresh.get(&blob).copied()) else { continue };
            let mut record = [0; RECORD];
            record[..21].copy_from_slice(&blob_key(&blob));
            record[21..].copy_from_slice(hash.as_bytes());
            records.push(record);
        }
        records.sort_unstable();
        records.dedup_by(|a, b| a[..21] == b[..21]);
        let mut out = Vec::with_capacity(MAGIC.len() + RECORD * records.len());
        out.extend_from_slice(MAGIC);
        for record in &records {
            out.extend_from_slice(record);
        }
        crate::paths::write_atomic(&self.file, &out)
    }
}

/// The records of a map file, when whole and strictly sorted.
fn decode(mut bytes: Vec<u8>) -> Option<Vec<u8>> {
    if !bytes.starts_with(MAGIC) || !(bytes.len() - MAGIC.len()).is_multiple_of(RECORD) {
        return None;
    }
    let records = &bytes[MAGIC.len()..];
    let sorted = records
        .chunks_exact(RECORD)
        .zip(records.chunks_exact(RECORD).skip(1))
        .all(|(a, b)| record_key(a) < record_key(b));
    if !sorted {
        return None;
    }
    // The records moved to the front in place: no second buffer.
    bytes.copy_within(MAGIC.len().., 0);
    bytes.truncate(bytes.len() - MAGIC.len());
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_converting_configuration_is_refused() {
        assert!(config_allows("user.name\nA\0core.autocrlf\nfalse\0core.bare\nfalse\0").is_ok());
        assert!(config_allows("core.autocrlf\ntrue\0").is_err());
        assert!(config_allows("core.autocrlf\ninput\0").is_err());
        assert!(config_allows("core.attributesfile\n~/.gitattributes\0").is_err());
        assert!(config_allows("core.autocrlf\0").is_err(), "a bare name is true");
        assert!(config_allows("core.autocrlf\ntrue\0core.autocrlf\nfalse\0").is_ok(), "the last one wins");
        assert!(config_allows("").is_ok());
    }

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

    fn map_of(blobs: &[(BlobId, u8)]) -> OidMap {
        let mut records: Vec<Vec<u8>> = blobs
            .iter()
            .map(|(blob, fill)| {
                let mut r = blob_key(blob).to_vec();
                r.extend_from_slice(&[*fill; 32]);
                r
            })
            .collect();
        records.sort();
        let mut bytes = MAGIC.to_vec();
        records.iter().for_each(|r| bytes.extend_from_slice(r));
        OidMap::of(PathBuf::new(), decode(bytes).expect("sorted"))
    }

    #[test]
    fn every_saved_blob_is_found_and_no_other() {
        // Ids spread as SHA-1s are, bunched, and sharing their first bytes.
        let mut blobs: Vec<(BlobId, u8)> = (0u32..500)
            .map(|i| {
                let id: [u8; 20] = blake3::hash(&i.to_le_bytes()).as_bytes()[..20].try_into().unwrap();
                ((id, i % 7 == 0), (i % 250) as u8)
            })
            .collect();
        blobs.extend((0u8..20).map(|i| (([0xab; 20].map(|b| b ^ i), false), i)));
        blobs.push((([0; 20], true), 1));
        blobs.push((([0xff; 20], false), 2));
        let map = map_of(&blobs);
        for (blob, fill) in &blobs {
            assert_eq!(map.get(blob), Some(blake3::Hash::from_bytes([*fill; 32])), "{blob:?}");
            assert_eq!(map.get(&(blob.0, !blob.1)), None, "the link flag is part of the key");
        }
        assert_eq!(map.get(&([0x7f; 20], false)), None);
        assert_eq!(map_of(&[]).get(&([1; 20], false)), None);
    }

    #[test]
    fn a_map_reads_back_what_it_saved_and_refuses_a_torn_or_unsorted_file() {
        let record = |id: u8| {
            let mut r = vec![id; 20];
            r.push(1);
            r.extend_from_slice(&[9; 32]);
            r
        };
        let mut bytes = MAGIC.to_vec();
        bytes.extend(record(7));
        bytes.extend(record(8));
        let map = OidMap::of(PathBuf::new(), decode(bytes.clone()).unwrap());
        assert_eq!(map.get(&([7; 20], true)), Some(blake3::Hash::from_bytes([9; 32])));
        assert!(decode(bytes[..bytes.len() - 1].to_vec()).is_none(), "torn");
        let mut unsorted = MAGIC.to_vec();
        unsorted.extend(record(8));
        unsorted.extend(record(7));
        assert!(decode(unsorted).is_none(), "unsorted");
        assert!(decode(b"VXOM1\n".to_vec()).is_none(), "the first version's file");
    }
}
