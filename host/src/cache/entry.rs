//! The on-disk form of one cache entry: a single file, so that one rename
//! publishes it whole.
//!
//! ```text
//! "VXCE1\n" | header length (u64 LE) | header (JSON) | log | outputs archive (tar+zstd)
//! ```
//!
//! The header carries the lengths and the BLAKE3 of the body; a read that
//! finds any mismatch (truncation, a flipped bit, a foreign file) reports
//! the entry corrupt instead of returning it.

use serde::{Deserialize, Serialize};

use super::key::{CacheKey, KeyManifest};

const MAGIC: &[u8] = b"VXCE1\n";
/// Headers beyond this are not ours (protects against huge allocations).
const MAX_HEADER: u64 = 64 << 20;

/// One output file as archived: path relative to the project, its hash and mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputFile {
    pub path: String,
    pub hash: String,
    pub mode: u32,
    /// The link target for a symbolic link.
    pub link: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryHeader {
    pub key: CacheKey,
    pub task: String,
    pub exit_code: i32,
    pub duration_ms: u64,
    pub created_unix_ms: u64,
    pub log_len: u64,
    pub archive_len: u64,
    pub body_hash: String,
    pub outputs: Vec<OutputFile>,
    pub manifest: KeyManifest,
}

/// Why bytes read for a key are not a usable entry.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("not a vx cache entry")]
    NotAnEntry,
    #[error("truncated header")]
    TruncatedHeader,
    #[error("header too large")]
    HeaderTooLarge,
    #[error("unreadable header: {0}")]
    UnreadableHeader(serde_json::Error),
    #[error("holds key {0} instead")]
    OtherKey(CacheKey),
    #[error("body is {got} bytes, expected {expected}")]
    BodyLength { got: usize, expected: u64 },
    #[error("content hash mismatch")]
    HashMismatch,
}

/// A verified entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub header: EntryHeader,
    pub log: Vec<u8>,
    pub archive: Vec<u8>,
}

impl Entry {
    /// Fills in the lengths and body hash and serialises the entry.
    pub fn encode(mut header: EntryHeader, log: &[u8], archive: &[u8]) -> Vec<u8> {
        let mut body = blake3::Hasher::new();
        body.update(log);
        body.update(archive);
        header.log_len = log.len() as u64;
        header.archive_len = archive.len() as u64;
        header.body_hash = body.finalize().to_hex().to_string();
        let json = serde_json::to_vec(&header).expect("entry header serializes");
        let mut out = Vec::with_capacity(MAGIC.len() + 8 + json.len() + log.len() + archive.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(log);
        out.extend_from_slice(archive);
        out
    }

    /// Parses and verifies an entry read for `key`.
    pub fn decode(bytes: &[u8], key: &CacheKey) -> Result<Entry, EntryError> {
        let rest = bytes.strip_prefix(MAGIC).ok_or(EntryError::NotAnEntry)?;
        let (len, rest) = rest.split_at_checked(8).ok_or(EntryError::TruncatedHeader)?;
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
        if len > MAX_HEADER {
            return Err(EntryError::HeaderTooLarge);
        }
        let (json, body) = rest.split_at_checked(len as usize).ok_or(EntryError::TruncatedHeader)?;
        let header: EntryHeader = serde_json::from_slice(json).map_err(EntryError::UnreadableHeader)?;
        if &header.key != key {
            return Err(EntryError::OtherKey(header.key));
        }
        let expected = header.log_len.saturating_add(header.archive_len);
        if body.len() as u64 != expected {
            return Err(EntryError::BodyLength { got: body.len(), expected });
        }
        if blake3::hash(body).to_hex().as_str() != header.body_hash {
            return Err(EntryError::HashMismatch);
        }
        let (log, archive) = body.split_at(header.log_len as usize);
        Ok(Entry { log: log.to_vec(), archive: archive.to_vec(), header })
    }
}

/// A minimal header for tests of the store.
#[cfg(test)]
pub(crate) fn test_header(key: &CacheKey) -> EntryHeader {
    tests::header(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn header(key: &CacheKey) -> EntryHeader {
        EntryHeader {
            key: key.clone(),
            task: "a#build".into(),
            exit_code: 0,
            duration_ms: 5,
            created_unix_ms: 1,
            log_len: 0,
            archive_len: 0,
            body_hash: String::new(),
            outputs: Vec::new(),
            manifest: KeyManifest {
                schema: 1,
                task: "a#build".into(),
                command: "x".into(),
                executor: "local".into(),
                executor_config: String::new(),
                env_mode: "strict".into(),
                env: Vec::new(),
                runtime: Vec::new(),
                files: Default::default(),
                global: Vec::new(),
                deps: Vec::new(),
                package_json: String::new(),
                lockfile: String::new(),
                root_deps: String::new(),
                outputs: Vec::new(),
            },
        }
    }

    #[test]
    fn round_trips_and_refuses_damage() {
        let key = CacheKey("a".repeat(64));
        let bytes = Entry::encode(header(&key), b"log line\n", b"archive");
        let entry = Entry::decode(&bytes, &key).unwrap();
        assert_eq!(entry.log, b"log line\n");
        assert_eq!(entry.archive, b"archive");
        assert!(Entry::decode(&bytes[..bytes.len() - 1], &key).unwrap_err().to_string().contains("body"));
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(Entry::decode(&flipped, &key).unwrap_err().to_string().contains("hash"));
        assert!(Entry::decode(&bytes, &CacheKey("b".repeat(64))).is_err());
        assert!(Entry::decode(b"garbage", &key).is_err());
        assert!(Entry::decode(&bytes[..10], &key).is_err());
    }
}
