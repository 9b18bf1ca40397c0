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
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

const MAGIC: &[u8] = b"VXSI1\n";
/// Files larger than this are hashed through a memory map.
const MMAP_THRESHOLD: u64 = 256 * 1024;
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
    index: RwLock<HashMap<PathBuf, (Stat, blake3::Hash)>>,
    file: PathBuf,
    dirty: AtomicBool,
}

impl FileHasher {
    /// Loads the index from `file`; a missing or unreadable one starts empty.
    pub fn load(file: PathBuf) -> FileHasher {
        let index = std::fs::read(&file).ok().and_then(|bytes| decode(&bytes)).unwrap_or_default();
        FileHasher { index: RwLock::new(index), file, dirty: AtomicBool::new(false) }
    }

    /// The BLAKE3 of a file's content; a symbolic link is hashed as its
    /// target path, never followed.
    pub fn hash(&self, path: &Path) -> std::io::Result<blake3::Hash> {
        self.hash_stat(path, &FileStat::of(&std::fs::symlink_metadata(path)?))
    }

    /// Like [`FileHasher::hash`], with the file's `lstat` already taken.
    pub fn hash_stat(&self, path: &Path, file: &FileStat) -> std::io::Result<blake3::Hash> {
        let stat = file.index_stat();
        if let Some((known, hash)) = self.index.read().expect("hash index poisoned").get(path)
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
        } else if file.size >= MMAP_THRESHOLD {
            let mut h = blake3::Hasher::new();
            h.update_mmap(path)?;
            h.finalize()
        } else {
            let mut buf = Vec::with_capacity(file.size as usize);
            std::fs::File::open(path)?.read_to_end(&mut buf)?;
            blake3::hash(&buf)
        };
        self.index.write().expect("hash index poisoned").insert(path.to_path_buf(), (stat, hash));
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
        let index = self.index.read().expect("hash index poisoned");
        let mut out = Vec::with_capacity(MAGIC.len() + index.len() * 96);
        out.extend_from_slice(MAGIC);
        for (path, (stat, hash)) in index.iter() {
            if now_ns - stat.mtime_ns.max(stat.ctime_ns) < RACY_NS {
                continue;
            }
            let bytes = path.as_os_str().as_encoded_bytes();
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
            out.extend_from_slice(&stat.size.to_le_bytes());
            out.extend_from_slice(&stat.mtime_ns.to_le_bytes());
            out.extend_from_slice(&stat.ctime_ns.to_le_bytes());
            out.extend_from_slice(&stat.ino.to_le_bytes());
            out.extend_from_slice(hash.as_bytes());
        }
        let written = super::fsutil::write_atomic(&self.file, &out);
        if written.is_err() {
            self.dirty.store(true, Ordering::Relaxed);
        }
        written
    }
}

/// Parses a saved index; `None` for anything malformed (it is rebuilt).
fn decode(bytes: &[u8]) -> Option<HashMap<PathBuf, (Stat, blake3::Hash)>> {
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let mut map = HashMap::new();
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, tail) = rest.split_at_checked(n)?;
        rest = tail;
        Some(head)
    };
    let u64_of = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    while let Some(len) = take(4) {
        let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
        let path = std::str::from_utf8(take(len)?).ok().map(PathBuf::from)?;
        let size = u64_of(take(8)?);
        let mtime_ns = u64_of(take(8)?) as i64;
        let ctime_ns = u64_of(take(8)?) as i64;
        let ino = u64_of(take(8)?);
        let hash = blake3::Hash::from_bytes(take(32)?.try_into().ok()?);
        map.insert(path, (Stat { size, mtime_ns, ctime_ns, ino }, hash));
    }
    Some(map)
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
        let map = hasher.index.read().unwrap().clone();
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
}
