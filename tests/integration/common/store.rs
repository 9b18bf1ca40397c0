//! Reading a vx store straight from disk, as a reader must: every file
//! under `entries/KK/KEY` parsed and verified here (magic, header, the key
//! it is filed under, lengths, BLAKE3 of the body), independently of the
//! code under test. Shared by the cache, fault and crash tests.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::TestEnv;

pub(crate) const MAGIC: &[u8] = b"VXCE1\n";

/// The default store of a workspace.
pub(crate) fn store(env: &TestEnv) -> PathBuf {
    env.path(".vx/cache")
}

pub(crate) fn entry_path(store: &Path, key: &str) -> PathBuf {
    store.join("entries").join(&key[..2]).join(key)
}

/// Every file under `STORE/entries/` (whatever its shape), sorted.
pub(crate) fn entry_files(store: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(shards) = std::fs::read_dir(store.join("entries")) else { return out };
    for shard in shards.flatten() {
        match std::fs::read_dir(shard.path()) {
            Ok(files) => out.extend(files.flatten().map(|f| f.path())),
            Err(_) => out.push(shard.path()),
        }
    }
    out.sort();
    out
}

/// An entry read back and verified.
#[derive(Debug)]
pub(crate) struct RawEntry {
    pub header: Value,
    pub log: Vec<u8>,
    pub archive: Vec<u8>,
}

/// Parses an entry file and verifies it exactly as a reader must: magic,
/// header, the key it is filed under, lengths and the BLAKE3 of the body.
pub(crate) fn parse_entry(bytes: &[u8], key: &str) -> Result<RawEntry, String> {
    let rest = bytes.strip_prefix(MAGIC).ok_or("no magic")?;
    let (len, rest) = rest.split_at_checked(8).ok_or("truncated length")?;
    let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
    let (json, body) = rest.split_at_checked(len).ok_or("truncated header")?;
    let header: Value = serde_json::from_slice(json).map_err(|e| format!("header: {e}"))?;
    if header["key"] != key {
        return Err(format!("filed under {key} but holds {}", header["key"]));
    }
    let log_len = header["log_len"].as_u64().ok_or("no log_len")? as usize;
    let archive_len = header["archive_len"].as_u64().ok_or("no archive_len")? as usize;
    if body.len() != log_len + archive_len {
        return Err(format!("body is {} bytes, header says {}", body.len(), log_len + archive_len));
    }
    if blake3::hash(body).to_hex().as_str() != header["body_hash"] {
        return Err("body hash mismatch".into());
    }
    let (log, archive) = body.split_at(log_len);
    Ok(RawEntry { header, log: log.to_vec(), archive: archive.to_vec() })
}

/// Serialises an entry with correct lengths and body hash.
pub(crate) fn encode_entry(mut header: Value, log: &[u8], archive: &[u8]) -> Vec<u8> {
    let mut body = blake3::Hasher::new();
    body.update(log);
    body.update(archive);
    header["log_len"] = log.len().into();
    header["archive_len"] = archive.len().into();
    header["body_hash"] = body.finalize().to_hex().as_str().into();
    let json = serde_json::to_vec(&header).expect("header serialises");
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(log);
    out.extend_from_slice(archive);
    out
}

/// Panics unless every file under `entries/` is a whole, verified entry
/// filed under its own key; returns the keys.
#[track_caller]
pub(crate) fn assert_store_verifies(store: &Path) -> Vec<String> {
    let mut keys = Vec::new();
    for path in entry_files(store) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let shard = path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or_default();
        assert!(
            name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()) && name.starts_with(shard),
            "a file that is not an entry sits under entries/: {}",
            path.display()
        );
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        if let Err(why) = parse_entry(&bytes, &name) {
            panic!("entry {} does not verify: {why}", path.display());
        }
        keys.push(name);
    }
    keys
}
