//! File hashing with a stat index: a file whose size, mtime, ctime and inode
//! are unchanged since it was last hashed is not read again. The index lives
//! in memory for the invocation (so a file shared by many tasks is hashed
//! once) and is saved under `.vx/` for the next one.
//!
//! A file modified within the same timestamp tick as it was hashed could
//! keep its stat; such "racily clean" entries (modified less than a second
//! before the index is saved) are not saved, so the next run reads them
//! again, as git does.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

const MAGIC: &[u8] = b"VXSI1\n";
/// Files larger than this are hashed as they stream in, not read whole.
const STREAM_THRESHOLD: u64 = 256 * 1024;
/// Entries modified this recently are not saved (see the module doc).
const RACY_NS: i64 = 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    ino: u64,
}

/// What one `lstat` says about a file: the index's [`Stat`] and the mode
/// (type and permission bits). The walk that lists a task's files takes it
/// relative to the directory it is reading, and hands it on, so each file
/// is stat'ed once per look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileStat {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub mode: u32,
}

impl FileStat {
    pub fn of(meta: &std::fs::Metadata) -> FileStat {
        FileStat {
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
            mode: meta.mode(),
        }
    }

    pub fn is_symlink(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFLNK
    }

    pub fn is_file(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFREG
    }

    /// The permission bits, as archives keep them.
    pub fn perm(&self) -> u32 {
        self.mode & 0o7777
    }

    fn index_stat(&self) -> Stat {
        Stat { size: self.size, mtime_ns: self.mtime_ns, ctime_ns: self.ctime_ns, ino: self.ino }
    }
}

/// The hasher shared by every task of one invocation.
#[derive(Debug)]
pub struct FileHasher {
    /// The index as loaded. It is never written during the invocation, so
    /// the threads that look a whole tree up share it without a lock.
    saved: Saved,
    /// Files hashed during this invocation; they win over `saved`.
    fresh: RwLock<Index>,
    file: PathBuf,
    dirty: AtomicBool,
}

impl FileHasher {
    /// Loads the index from `file`; a missing or unreadable one starts empty.
    pub fn load(file: PathBuf) -> FileHasher {
        let saved = Saved::ready(read_index(&file));
        FileHasher { saved, fresh: RwLock::default(), file, dirty: AtomicBool::new(false) }
    }

    /// Like [`FileHasher::load`], reading the file on a thread of its own:
    /// a big tree's index takes a while to read, and the workspace loads
    /// and the first walk lists meanwhile (neither needs it).
    pub fn load_in_background(file: PathBuf) -> FileHasher {
        let path = file.clone();
        let source = match std::thread::Builder::new().name("vx-stat-index".into()).spawn(move || read_index(&path)) {
            Ok(thread) => Source::Thread(thread),
            Err(_) => Source::File(file.clone()),
        };
        FileHasher::with(Saved { ready: OnceLock::new(), source: Mutex::new(source) }, file)
    }

    /// Like [`FileHasher::load`], reading the file only when a file is
    /// first hashed: under `monitor = "git"` git's index vouches for most
    /// files, and a run that hashes none never reads this one.
    pub fn load_when_needed(file: PathBuf) -> FileHasher {
        FileHasher::with(Saved { ready: OnceLock::new(), source: Mutex::new(Source::File(file.clone())) }, file)
    }

    fn with(saved: Saved, file: PathBuf) -> FileHasher {
        FileHasher { saved, fresh: RwLock::default(), file, dirty: AtomicBool::new(false) }
    }

    /// The BLAKE3 of a file's content; a symbolic link is hashed as its
    /// target path, never followed.
    pub fn hash(&self, path: &Path) -> std::io::Result<blake3::Hash> {
        self.hash_stat(path, &FileStat::of(&std::fs::symlink_metadata(path)?))
    }

    /// Like [`FileHasher::hash`], with the file's `lstat` already taken.
    pub fn hash_stat(&self, path: &Path, file: &FileStat) -> std::io::Result<blake3::Hash> {
        let stat = file.index_stat();
        if let Some((known, hash)) = self.saved.get().get(path.as_os_str().as_bytes())
            && known == stat
        {
            return Ok(hash);
        }
        if let Some((known, hash)) = self.fresh.read().expect("hash index poisoned").get(path)
            && *known == stat
        {
            return Ok(*hash);
        }
        let hash = if file.is_symlink() {
            let target = std::fs::read_link(path)?;
            let mut h = blake3::Hasher::new();
            h.update(b"symlink\0");
            h.update(target.as_os_str().as_encoded_bytes());
            h.finalize()
        } else if file.mode & libc::S_IFMT == libc::S_IFDIR {
            // The walk lists a directory only where following a link
            // would walk it again.
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a symbolic link loop: the link leads back to a directory it is in; point it elsewhere or leave it out of `inputs`",
            ));
        } else if !file.is_file() {
            // A FIFO would block the open for ever, a device the read; a
            // socket has no content. None can key a task.
            return Err(not_a_file());
        } else if file.size >= STREAM_THRESHOLD {
            // Through the handle `open_regular` checked, not the path: a
            // FIFO swapped in after the `lstat` is refused, never waited on.
            let mut h = blake3::Hasher::new();
            h.update_reader(crate::paths::open_regular(path)?)?;
            h.finalize()
        } else {
            let mut buf = Vec::with_capacity(file.size as usize);
            crate::paths::open_regular(path)?.read_to_end(&mut buf)?;
            blake3::hash(&buf)
        };
        self.fresh.write().expect("hash index poisoned").insert(path.to_path_buf(), (stat, hash));
        self.dirty.store(true, Ordering::Relaxed);
        Ok(hash)
    }

    /// Writes the index back (atomically) if anything was hashed.
    pub fn save(&self) -> std::io::Result<()> {
        // Cleared before writing: a hash recorded meanwhile marks it dirty
        // again, and a run that saves per cycle and at exit writes once.
        if !self.dirty.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        let now_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
        let fresh = self.fresh.read().expect("hash index poisoned");
        let saved =
            self.saved.get().iter().filter(|(path, _, _)| !fresh.contains_key(Path::new(OsStr::from_bytes(path))));
        let mut all: Vec<(&[u8], Stat, blake3::Hash)> = saved
            .chain(fresh.iter().map(|(path, (stat, hash))| (path.as_os_str().as_bytes(), *stat, *hash)))
            .filter(|(_, stat, _)| now_ns.saturating_sub(stat.mtime_ns.max(stat.ctime_ns)) >= RACY_NS)
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = Vec::with_capacity(MAGIC.len() + all.len() * 96);
        out.extend_from_slice(MAGIC);
        for (bytes, stat, hash) in all {
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
            out.extend_from_slice(&stat.size.to_le_bytes());
            out.extend_from_slice(&stat.mtime_ns.to_le_bytes());
            out.extend_from_slice(&stat.ctime_ns.to_le_bytes());
            out.extend_from_slice(&stat.ino.to_le_bytes());
            out.extend_from_slice(hash.as_bytes());
        }
        let written = crate::paths::write_atomic(&self.file, &out);
        if written.is_err() {
            self.dirty.store(true, Ordering::Relaxed);
        }
        written
    }
}

/// Path → (stat, hash), for the files hashed during one invocation.
type Index = HashMap<PathBuf, (Stat, blake3::Hash)>;

/// The saved index, or where it is still to come from.
#[derive(Debug)]
struct Saved {
    ready: OnceLock<SavedIndex>,
    source: Mutex<Source>,
}

#[derive(Debug)]
enum Source {
    Taken,
    /// A thread reading it.
    Thread(JoinHandle<SavedIndex>),
    /// The file, to read at the first look-up.
    File(PathBuf),
}

impl Saved {
    fn ready(index: SavedIndex) -> Saved {
        Saved { ready: OnceLock::from(index), source: Mutex::new(Source::Taken) }
    }

    /// The index, once read (the first caller waits for it).
    fn get(&self) -> &SavedIndex {
        self.ready.get_or_init(|| {
            let mut source = self.source.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match std::mem::replace(&mut *source, Source::Taken) {
                // A reader that failed leaves an empty index: every file is
                // hashed, as on a first run.
                Source::Thread(thread) => thread.join().unwrap_or_default(),
                Source::File(file) => read_index(&file),
                Source::Taken => SavedIndex::default(),
            }
        })
    }
}

/// The saved index at `file`; empty when missing or malformed (rebuilt).
fn read_index(file: &Path) -> SavedIndex {
    crate::paths::read_regular(file, crate::paths::STATE_LIMIT).ok().and_then(SavedIndex::parse).unwrap_or_default()
}

/// Bytes of one record after its path: size, mtime, ctime, inode, hash.
const FIXED: usize = 4 * 8 + 32;

/// The index as saved: the file's bytes and where each record starts,
/// sorted by path, with a table from a 64-bit hash of each path to its
/// record (binary search settles the astronomically rare collision).
/// Loading it allocates nothing per file; decoding a 100,000-entry index
/// into a map of paths cost about as much as stat'ing the whole tree.
///
/// Record: path length (u32 LE) | path | size | mtime ns | ctime ns | inode
/// (u64 LE each) | BLAKE3. Saved files are sorted by path; an unsorted one
/// (written before they were) is sorted on load.
#[derive(Debug, Default)]
struct SavedIndex {
    bytes: Vec<u8>,
    records: Vec<usize>,
    by_hash: HashMap<u64, usize, BuildHasherDefault<PreHashed>>,
}

/// A hasher for keys that are already hashes.
#[derive(Debug, Default)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// FxHash: a path is looked up once per file per run, and SipHash's
/// resistance to chosen keys buys nothing for the workspace's own paths
/// (a collision costs a binary search, never a wrong answer).
fn path_hash(path: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(path)
}

impl SavedIndex {
    /// `None` for anything malformed (the index is then rebuilt).
    fn parse(bytes: Vec<u8>) -> Option<SavedIndex> {
        if !bytes.starts_with(MAGIC) {
            return None;
        }
        let mut records = Vec::with_capacity(bytes.len() / 96);
        let mut at = MAGIC.len();
        while at < bytes.len() {
            let len = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
            let end = at.checked_add(4 + len + FIXED)?;
            if end > bytes.len() {
                return None;
            }
            records.push(at);
            at = end;
        }
        if !records.windows(2).all(|w| path_at(&bytes, w[0]) < path_at(&bytes, w[1])) {
            records.sort_by(|a, b| path_at(&bytes, *a).cmp(path_at(&bytes, *b)));
        }
        let mut by_hash = HashMap::with_capacity_and_hasher(records.len(), BuildHasherDefault::default());
        for at in &records {
            by_hash.insert(path_hash(path_at(&bytes, *at)), *at);
        }
        Some(SavedIndex { bytes, records, by_hash })
    }

    fn get(&self, path: &[u8]) -> Option<(Stat, blake3::Hash)> {
        if let Some(at) = self.by_hash.get(&path_hash(path))
            && path_at(&self.bytes, *at) == path
        {
            return Some(self.entry(*at));
        }
        let found = self.records.binary_search_by(|at| path_at(&self.bytes, *at).cmp(path)).ok()?;
        Some(self.entry(self.records[found]))
    }

    fn entry(&self, at: usize) -> (Stat, blake3::Hash) {
        let fixed = &self.bytes[at + 4 + path_at(&self.bytes, at).len()..][..FIXED];
        let u64_at = |i: usize| u64::from_le_bytes(fixed[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let stat = Stat { size: u64_at(0), mtime_ns: u64_at(1) as i64, ctime_ns: u64_at(2) as i64, ino: u64_at(3) };
        (stat, blake3::Hash::from_bytes(fixed[32..].try_into().expect("32 bytes")))
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], Stat, blake3::Hash)> {
        self.records.iter().map(|at| {
            let (stat, hash) = self.entry(*at);
            (path_at(&self.bytes, *at), stat, hash)
        })
    }
}

/// The path of the record at `at` (checked by [`SavedIndex::parse`]).
fn path_at(bytes: &[u8], at: usize) -> &[u8] {
    let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
    &bytes[at + 4..at + 4 + len]
}

/// The saved index as a map (tests compare it whole).
/// The error for an input that is not a regular file or a link.
fn not_a_file() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "not a regular file (a FIFO, socket or device): vx keys only files and links",
    )
}

#[cfg(test)]
fn decode(bytes: &[u8]) -> Option<Index> {
    let saved = SavedIndex::parse(bytes.to_vec())?;
    Some(saved.iter().map(|(path, stat, hash)| (PathBuf::from(OsStr::from_bytes(path)), (stat, hash))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rehashes_changed_files_and_survives_a_round_trip() {
        let dir = std::env::temp_dir().join(format!("vx-hasher-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let hasher = FileHasher::load(dir.join("index"));
        assert_eq!(hasher.hash(&file).unwrap(), blake3::hash(b"one"));
        std::fs::write(&file, "two!").unwrap();
        assert_eq!(hasher.hash(&file).unwrap(), blake3::hash(b"two!"), "a changed size is seen");
        let map = hasher.fresh.read().unwrap().clone();
        let mut encoded = MAGIC.to_vec();
        for (path, (stat, hash)) in &map {
            let bytes = path.as_os_str().as_encoded_bytes();
            encoded.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            encoded.extend_from_slice(bytes);
            for v in [stat.size, stat.mtime_ns as u64, stat.ctime_ns as u64, stat.ino] {
                encoded.extend_from_slice(&v.to_le_bytes());
            }
            encoded.extend_from_slice(hash.as_bytes());
        }
        assert_eq!(decode(&encoded).unwrap(), map);
        assert!(decode(b"garbage").is_none());
        assert!(decode(&encoded[..encoded.len() - 3]).is_none(), "a truncated index is refused");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_loaded_index_answers_until_a_file_changes_and_saving_merges_both() {
        let dir = std::env::temp_dir().join(format!("vx-hasher-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.txt"), dir.join("b.txt"));
        std::fs::write(&a, "one").unwrap();
        std::fs::write(&b, "two").unwrap();
        let stat_a = FileStat::of(&std::fs::symlink_metadata(&a).unwrap()).index_stat();
        let old = Stat { size: 3, mtime_ns: 1, ctime_ns: 1, ino: 1 };
        let marker = blake3::hash(b"recorded, never read");
        // Written unsorted (b before a), as indexes were before saves sorted them.
        let mut bytes = MAGIC.to_vec();
        for (path, stat) in [(&b, old), (&a, stat_a)] {
            let path = path.as_os_str().as_bytes();
            bytes.extend_from_slice(&(path.len() as u32).to_le_bytes());
            bytes.extend_from_slice(path);
            for v in [stat.size, stat.mtime_ns as u64, stat.ctime_ns as u64, stat.ino] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            bytes.extend_from_slice(marker.as_bytes());
        }
        let saved = SavedIndex::parse(bytes).unwrap();
        let file = dir.join("index");
        let hasher = FileHasher {
            saved: Saved::ready(saved),
            fresh: RwLock::default(),
            file: file.clone(),
            dirty: AtomicBool::new(false),
        };
        assert_eq!(hasher.hash(&a).unwrap(), marker, "a file whose stat matches the loaded index is not read");
        assert_eq!(hasher.hash(&b).unwrap(), blake3::hash(b"two"), "a stale loaded entry is not trusted");
        hasher.fresh.write().unwrap().insert(b.clone(), (old, blake3::hash(b"fresh")));
        hasher.dirty.store(true, Ordering::Relaxed);
        hasher.save().unwrap();
        let reloaded = FileHasher::load(file.clone());
        let get = |p: &Path| reloaded.saved.get().get(p.as_os_str().as_bytes()).map(|e| e.1);
        assert_eq!(get(&b), Some(blake3::hash(b"fresh")), "this run's hash wins");
        assert_eq!(reloaded.saved.get().records.len(), 1 + usize::from(get(&a).is_some()));
        let on_disk = std::fs::read(&file).unwrap();
        let paths: Vec<&[u8]> = reloaded.saved.get().records.iter().map(|at| path_at(&on_disk, *at)).collect();
        assert!(paths.windows(2).all(|w| w[0] < w[1]), "saved sorted by path");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Found by fuzzing (tests/fuzz/regressions/stat_index): a record
    /// whose mtime is i64::MIN overflowed the racy-file check on save.
    #[test]
    fn a_record_with_an_extreme_mtime_is_saved_without_overflow() {
        let dir = std::env::temp_dir().join(format!("vx-hasher-extreme-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut index = MAGIC.to_vec();
        index.extend_from_slice(&3u32.to_le_bytes());
        index.extend_from_slice(b"/gone");
        for v in [1u64, i64::MIN as u64, i64::MIN as u64, 7] {
            index.extend_from_slice(&v.to_le_bytes());
        }
        index.extend_from_slice(&[0; 32]);
        std::fs::write(dir.join("index"), &index).unwrap();
        let file = dir.join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let hasher = FileHasher::load(dir.join("index"));
        hasher.hash(&file).unwrap();
        hasher.save().unwrap();
        assert!(SavedIndex::parse(std::fs::read(dir.join("index")).unwrap()).is_some(), "saved and readable");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
