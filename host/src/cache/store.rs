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
use super::fsutil::unique_suffix;
use super::key::CacheKey;

/// Temporary files older than this belong to a writer that died.
const STALE_TMP: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone)]
pub struct LocalStore {
    dir: PathBuf,
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    Hit(Box<Entry>),
    Miss,
    /// The entry was unusable and has been removed; the text says why.
    Corrupt(String),
}

/// Totals for `vx cache stats` and retention.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub entries: u64,
    pub bytes: u64,
}

impl LocalStore {
    pub fn new(dir: PathBuf) -> LocalStore {
        LocalStore { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join("entries").join(&key.0[..2]).join(&key.0)
    }

    pub fn contains(&self, key: &CacheKey) -> bool {
        CacheKey::is_valid(&key.0) && self.entry_path(key).is_file()
    }

    pub fn get(&self, key: &CacheKey) -> Lookup {
        if !CacheKey::is_valid(&key.0) {
            return Lookup::Miss;
        }
        let path = self.entry_path(key);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Corrupt(format!("unreadable: {e}")),
        };
        match Entry::decode(&bytes, key) {
            Ok(entry) => {
                // LRU: a hit makes the entry young again.
                if let Ok(f) = std::fs::File::options().write(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
                Lookup::Hit(Box::new(entry))
            }
            Err(why) => {
                let _ = std::fs::remove_file(&path);
                Lookup::Corrupt(why)
            }
        }
    }

    /// Publishes an encoded entry atomically. An existing entry for the
    /// key is replaced by an identical one, which is harmless.
    pub fn put(&self, key: &CacheKey, bytes: &[u8]) -> std::io::Result<()> {
        let tmp_dir = self.dir.join("tmp");
        std::fs::create_dir_all(&tmp_dir)?;
        let tmp = tmp_dir.join(format!("{}.{}", key.0, unique_suffix()));
        let dest = self.entry_path(key);
        let result = (|| {
            use std::io::Write;
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_data()?;
            std::fs::create_dir_all(dest.parent().expect("entries have a parent"))?;
            std::fs::rename(&tmp, &dest)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// Every entry with its size and last use, oldest first.
    fn list(&self) -> Vec<(PathBuf, u64, SystemTime)> {
        let mut out = Vec::new();
        let Ok(shards) = std::fs::read_dir(self.dir.join("entries")) else { return out };
        for shard in shards.flatten() {
            let Ok(files) = std::fs::read_dir(shard.path()) else { continue };
            for f in files.flatten() {
                if let Ok(meta) = f.metadata() {
                    out.push((f.path(), meta.len(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
                }
            }
        }
        out.sort_by_key(|(_, _, used)| *used);
        out
    }

    pub fn stats(&self) -> StoreStats {
        let list = self.list();
        StoreStats { entries: list.len() as u64, bytes: list.iter().map(|(_, size, _)| size).sum() }
    }

    /// Removes entries older than `max_age`, then the least recently used
    /// until the store fits `max_size`, and abandoned temporary files.
    /// Returns what was removed.
    pub fn gc(&self, max_size: u64, max_age: Duration) -> StoreStats {
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
            for t in tmps.flatten() {
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

    /// Removes every entry.
    pub fn clean(&self) -> std::io::Result<StoreStats> {
        let stats = self.stats();
        for sub in ["entries", "tmp"] {
            match std::fs::remove_dir_all(self.dir.join(sub)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(stats)
    }
}
