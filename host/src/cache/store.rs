//! The local store: one file per entry under `DIR/entries/KK/KEY`, written
//! to `DIR/tmp/` and renamed into place, so a `kill -9` at any moment
//! leaves the whole entry or none, and two vx processes sharing the store
//! never see each other's partial writes. A read that fails verification
//! removes the entry and reports a miss with a one-line warning.
//!
//! Retention: least recently used first (a hit refreshes the file's mtime),
//! by `max-size` and `max-age`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::entry::Entry;
use super::key::CacheKey;
use crate::paths::Contained;
use crate::paths::unique_suffix;

/// Temporary files older than this belong to a writer that died.
const STALE_TMP: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone)]
pub(crate) struct LocalStore {
    dir: PathBuf,
}

/// What a lookup found.
#[derive(Debug)]
pub(crate) enum Lookup {
    Hit(Box<Entry>),
    Miss,
    /// The entry was unusable and has been removed; the text says why.
    Corrupt(String),
    /// The store could not be read (permissions, an I/O error): nothing
    /// is known of the entry, so it is kept; the text says why.
    Unreadable(String),
}

/// A hit refreshes an entry's mtime (its last use, for LRU) only when the
/// last refresh is older than this: a fully cached run then writes nothing
/// to the store, and retention, which counts in days, still sees every
/// entry's last use to within this much.
pub(crate) const TOUCH_AFTER: Duration = Duration::from_secs(3600);

/// Reads an entry through one open file: its bytes, the file, and its mtime.
fn read_entry(path: &Path) -> std::io::Result<(Vec<u8>, std::fs::File, SystemTime)> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)?;
    Ok((bytes, file, meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
}

/// LRU: a hit makes the entry young again, unless it was made young
/// within [`TOUCH_AFTER`]. Setting an explicit time needs only ownership,
/// so the read-only file usually does; otherwise it is opened for writing.
fn touch(path: &Path, file: &std::fs::File, used: SystemTime, now: SystemTime) {
    if now.duration_since(used).is_ok_and(|age| age < TOUCH_AFTER) {
        return;
    }
    if file.set_modified(now).is_err()
        && let Ok(f) = std::fs::File::options().write(true).open(path)
    {
        let _ = f.set_modified(now);
    }
}

/// Totals for `vx cache stats` and retention.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StoreStats {
    pub entries: u64,
    pub bytes: u64,
}

impl LocalStore {
    pub(crate) fn new(dir: PathBuf) -> LocalStore {
        LocalStore { dir }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join("entries").join(&key.0[..2]).join(&key.0)
    }

    pub(crate) fn contains(&self, key: &CacheKey) -> bool {
        CacheKey::is_valid(&key.0) && self.entry_path(key).is_file()
    }

    pub(crate) fn get(&self, key: &CacheKey) -> Lookup {
        if !CacheKey::is_valid(&key.0) {
            return Lookup::Miss;
        }
        let path = self.entry_path(key);
        let (bytes, file, used) = match read_entry(&path) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Unreadable(e.to_string()),
        };
        match Entry::decode(&bytes, key) {
            Ok(entry) => {
                touch(&path, &file, used, SystemTime::now());
                Lookup::Hit(Box::new(entry))
            }
            Err(why) => {
                let _ = std::fs::remove_file(&path);
                Lookup::Corrupt(why.to_string())
            }
        }
    }

    /// The bytes of `key`'s entry as they are, unverified, `None` when
    /// there is none: the store serving as another cache's [`Backend`]
    /// (whose caller verifies). A read refreshes the entry's last use.
    ///
    /// [`Backend`]: super::Backend
    pub(super) fn read(&self, key: &CacheKey) -> std::io::Result<Option<Vec<u8>>> {
        if !CacheKey::is_valid(&key.0) {
            return Ok(None);
        }
        let path = self.entry_path(key);
        match read_entry(&path) {
            Ok((bytes, file, used)) => {
                touch(&path, &file, used, SystemTime::now());
                Ok(Some(bytes))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Publishes an encoded entry atomically. An existing entry for the
    /// key is replaced by an identical one, which is harmless.
    /// Writes go through a handle on the store directory, so a link
    /// planted inside it (`entries/ab` pointing elsewhere) is not followed
    /// out of it.
    pub(crate) fn put(&self, key: &CacheKey, bytes: &[u8]) -> std::io::Result<()> {
        if !CacheKey::is_valid(&key.0) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("not a cache key: {}", key.0)));
        }
        let store = Contained::open(&self.dir)?;
        let tmp = format!("tmp/{}.{}", key.0, unique_suffix());
        let dest = format!("entries/{}/{}", &key.0[..2], key.0);
        let result = store.write_durable(&tmp, bytes).and_then(|()| store.rename(&tmp, &dest));
        if result.is_err() {
            let _ = store.remove_file(&tmp);
        }
        result
    }

    /// Every entry with its size and last use, oldest first. Only files
    /// named as vx names entries (`entries/KK/KEY`, a regular file) are
    /// listed: retention never removes anything else, wherever `--cache-dir`
    /// points.
    fn list(&self) -> Vec<(PathBuf, u64, SystemTime)> {
        let mut out = Vec::new();
        let Ok(shards) = std::fs::read_dir(self.dir.join("entries")) else { return out };
        for shard in shards.flatten() {
            let name = shard.file_name();
            let Some(shard_name) = name.to_str().filter(|n| is_shard_name(n)) else { continue };
            if !shard.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let Ok(files) = std::fs::read_dir(shard.path()) else { continue };
            for f in files.flatten() {
                let named = f.file_name().to_str().is_some_and(|n| is_entry_name(shard_name, n));
                if let (true, Ok(meta)) = (named, f.metadata())
                    && meta.is_file()
                {
                    out.push((f.path(), meta.len(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
                }
            }
        }
        out.sort_by_key(|(_, _, used)| *used);
        out
    }

    pub(crate) fn stats(&self) -> StoreStats {
        let list = self.list();
        StoreStats { entries: list.len() as u64, bytes: list.iter().map(|(_, size, _)| size).sum() }
    }

    /// Removes entries older than `max_age`, then the least recently used
    /// until the store fits `max_size`, and abandoned temporary files.
    /// Returns what was removed.
    pub(crate) fn gc(&self, max_size: u64, max_age: Duration) -> StoreStats {
        let now = SystemTime::now();
        let mut removed = StoreStats::default();
        let list = self.list();
        let mut total: u64 = list.iter().map(|(_, size, _)| size).sum();
        for (path, size, used) in list {
            let too_old = now.duration_since(used).is_ok_and(|age| age > max_age);
            if (too_old || total > max_size) && std::fs::remove_file(&path).is_ok() {
                total -= size;
                removed.entries += 1;
                removed.bytes += size;
            }
        }
        if let Ok(tmps) = std::fs::read_dir(self.dir.join("tmp")) {
            for t in tmps.flatten().filter(|t| t.file_name().to_str().is_some_and(is_tmp_name)) {
                let old = t
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|m| now.duration_since(m).is_ok_and(|a| a > STALE_TMP));
                if old {
                    let _ = std::fs::remove_file(t.path());
                }
            }
        }
        removed
    }

    /// Removes every entry, after checking that the directory is a vx
    /// store: everything under `entries/` and `tmp/` must be named as vx
    /// names its files, or nothing is removed (`--cache-dir` pointed at
    /// some other directory must not lose its `entries/`).
    pub(crate) fn clean(&self) -> Result<StoreStats, CleanError> {
        let mut doomed = Vec::new();
        let mut dirs = Vec::new();
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CleanError::Io { path, source }
        };
        let entries = self.dir.join("entries");
        match std::fs::read_dir(&entries) {
            Ok(shards) => {
                for shard in shards {
                    let shard = shard.map_err(io(&entries))?;
                    let path = shard.path();
                    let name = shard.file_name();
                    let shard_name = name.to_str().filter(|n| is_shard_name(n));
                    let (Some(shard_name), true) = (shard_name, shard.file_type().is_ok_and(|t| t.is_dir())) else {
                        return Err(CleanError::NotAStore { dir: self.dir.clone(), foreign: path });
                    };
                    for f in std::fs::read_dir(&path).map_err(io(&path))? {
                        let f = f.map_err(io(&path))?;
                        let named = f.file_name().to_str().is_some_and(|n| is_entry_name(shard_name, n));
                        if !named || !f.file_type().is_ok_and(|t| t.is_file()) {
                            return Err(CleanError::NotAStore { dir: self.dir.clone(), foreign: f.path() });
                        }
                        doomed.push(f.path());
                    }
                    dirs.push(path);
                }
                dirs.push(entries);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(CleanError::Io { path: entries, source: e }),
        }
        let tmp = self.dir.join("tmp");
        match std::fs::read_dir(&tmp) {
            Ok(files) => {
                for f in files {
                    let f = f.map_err(io(&tmp))?;
                    if !f.file_name().to_str().is_some_and(is_tmp_name) || !f.file_type().is_ok_and(|t| t.is_file()) {
                        return Err(CleanError::NotAStore { dir: self.dir.clone(), foreign: f.path() });
                    }
                    doomed.push(f.path());
                }
                dirs.push(tmp);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(CleanError::Io { path: tmp, source: e }),
        }
        let stats = self.stats();
        for path in doomed {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(CleanError::Io { path, source: e }),
                _ => {}
            }
        }
        // Emptied directories go too; one another vx has just written into
        // is left.
        for dir in dirs {
            let _ = std::fs::remove_dir(dir);
        }
        Ok(stats)
    }
}

/// Why `vx cache clean` removed nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CleanError {
    #[error(
        "{} does not look like a vx cache: {} is not a cache entry, so nothing was removed; point --cache-dir at a vx cache directory",
        .dir.display(),
        .foreign.display()
    )]
    NotAStore { dir: PathBuf, foreign: PathBuf },
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// A shard directory's name: the key's first two hex digits.
fn is_shard_name(name: &str) -> bool {
    name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// An entry's file name under shard `shard`: its key.
fn is_entry_name(shard: &str, name: &str) -> bool {
    CacheKey::is_valid(name) && name.starts_with(shard)
}

/// A temporary file's name as [`LocalStore::put`] makes it: `KEY.SUFFIX`.
fn is_tmp_name(name: &str) -> bool {
    name.split_once('.').is_some_and(|(key, _)| CacheKey::is_valid(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::entry::test_header;

    fn key(c: char) -> CacheKey {
        CacheKey(c.to_string().repeat(64))
    }

    fn put(store: &LocalStore, k: &CacheKey, used: SystemTime) {
        store.put(k, &Entry::encode(test_header(k), b"log", b"")).unwrap();
        std::fs::File::options().write(true).open(store.entry_path(k)).unwrap().set_modified(used).unwrap();
    }

    fn used(store: &LocalStore, k: &CacheKey) -> SystemTime {
        std::fs::metadata(store.entry_path(k)).unwrap().modified().unwrap()
    }

    #[test]
    fn a_hit_refreshes_only_an_entry_not_used_lately_and_gc_evicts_the_least_recent() {
        let dir = std::env::temp_dir().join(format!("vx-store-lru-{}", std::process::id()));
        let store = LocalStore::new(dir.clone());
        let now = SystemTime::now();
        let hour = Duration::from_secs(3600);
        let (old, recent, revived) = (key('a'), key('b'), key('c'));
        put(&store, &old, now - 72 * hour);
        put(&store, &recent, now - TOUCH_AFTER / 2);
        put(&store, &revived, now - 48 * hour);

        assert!(matches!(store.get(&recent), Lookup::Hit(_)));
        assert_eq!(used(&store, &recent), now - TOUCH_AFTER / 2, "a recent use is not written again");
        assert!(matches!(store.get(&revived), Lookup::Hit(_)));
        assert!(used(&store, &revived) >= now, "a hit on an entry idle for days makes it young");

        let size = std::fs::metadata(store.entry_path(&old)).unwrap().len();
        let removed = store.gc(2 * size, Duration::from_secs(14 * 24 * 3600));
        assert_eq!(removed.entries, 1);
        assert!(!store.contains(&old), "the least recently used goes first");
        store.gc(size, Duration::from_secs(14 * 24 * 3600));
        assert!(!store.contains(&recent) && store.contains(&revived), "then the one used half an hour ago");
        store.gc(u64::MAX, Duration::from_secs(60));
        assert!(store.contains(&revived), "max-age counts from the refreshed use");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_planted_in_the_store_is_not_followed_out_of_it() {
        let base = std::env::temp_dir().join(format!("vx-store-planted-{}", std::process::id()));
        let (dir, outside) = (base.join("store"), base.join("outside"));
        std::fs::create_dir_all(dir.join("entries")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let k = key('d');
        std::os::unix::fs::symlink(&outside, dir.join("entries/dd")).unwrap();
        let store = LocalStore::new(dir.clone());
        assert!(store.put(&k, &Entry::encode(test_header(&k), b"log", b"")).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing was written through the link");
        assert!(store.put(&CacheKey("../../x".into()), b"x").is_err(), "not a key");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn retention_and_clean_touch_only_files_named_as_entries() {
        let dir = std::env::temp_dir().join(format!("vx-store-foreign-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = LocalStore::new(dir.clone());
        put(&store, &key('a'), SystemTime::now() - Duration::from_secs(30 * 86_400));
        let foreign = dir.join("entries/aa/notes.txt");
        std::fs::write(&foreign, "kept").unwrap();
        std::fs::File::options().write(true).open(&foreign).unwrap().set_modified(SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(store.stats().entries, 1, "the foreign file is no entry");
        let removed = store.gc(u64::MAX, Duration::from_secs(86_400));
        assert_eq!(removed.entries, 1, "the old entry goes");
        assert!(foreign.exists(), "a file vx did not name is never removed");
        assert!(matches!(store.clean(), Err(CleanError::NotAStore { .. })), "nor emptied by clean");
        assert!(foreign.exists());
        std::fs::remove_file(&foreign).unwrap();
        store.clean().unwrap();
        assert!(!dir.join("entries").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
