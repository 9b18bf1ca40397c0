//! A vx cache entry as a REAPI `ActionResult`, and back.
//!
//! The entry of key K is stored under the digest of an `Action` whose
//! `Command` is `vx-cache-entry K` over an empty input root, so any REAPI
//! server keeps it in its ordinary action cache. The result holds what a
//! Bazel user would expect: every output file as a CAS blob with its digest
//! and mode, symbolic links, the log as stdout, exit code 0. One more blob,
//! named in `auxiliary_metadata`, is the entry's header (its key manifest,
//! the BLAKE3 of each output, the duration), so a hit becomes a complete
//! local entry again: `vx why`, `--dry` and the local store work the same
//! whichever tier it came from.
//!
//! An error here is the reason an entry is not used, shown in a warning
//! by `tier`; it never leaves `remote`, so it stays text.

use std::collections::BTreeMap;

use bazel_remote_apis::google::protobuf::{Any, Timestamp, UInt32Value};
use prost::Message;

use super::digest::{DigestFn, show};
use super::re;
use super::sign;
use crate::cache::{CacheKey, Entry, EntryHeader, Member, pack_members, read_members};

/// The `auxiliary_metadata` type naming the header blob (its value is an
/// encoded `Digest`).
pub(super) const HEADER_TYPE: &str = "type.vx.dev/vx.remote.v1.EntryHeader";
/// Appears as the worker of every result vx stores.
const WORKER: &str = "vx-cache";

/// Blobs to upload (digest, bytes).
pub(super) type Blobs = Vec<(re::Digest, Vec<u8>)>;

/// The action a vx key is stored under, with the blobs that describe it.
pub(super) fn key_action(f: DigestFn, key: &CacheKey) -> (re::Digest, Blobs) {
    let command = re::Command { arguments: vec!["vx-cache-entry".into(), key.0.clone()], ..Default::default() };
    let (command_digest, command_bytes) = f.of_message(&command);
    let (root_digest, root_bytes) = f.of_message(&re::Directory::default());
    let action = re::Action {
        command_digest: Some(command_digest.clone()),
        input_root_digest: Some(root_digest.clone()),
        do_not_cache: false,
        salt: b"vx-cache-v1".to_vec(),
        ..Default::default()
    };
    let (action_digest, action_bytes) = f.of_message(&action);
    let blobs = vec![(command_digest, command_bytes), (root_digest, root_bytes), (action_digest.clone(), action_bytes)];
    (action_digest, blobs)
}

/// An encoded vx entry as an action result and the blobs it refers to.
pub(super) fn to_result(
    f: DigestFn,
    action: &re::Digest,
    key: &CacheKey,
    bytes: &[u8],
    signing_key: Option<&[u8]>,
) -> Result<(re::ActionResult, Blobs), String> {
    let entry = Entry::decode(bytes, key).map_err(|e| e.to_string())?;
    let members = read_members(&entry.archive).map_err(|e| e.to_string())?;
    let mut blobs = Blobs::new();
    let mut result = re::ActionResult { exit_code: entry.header.exit_code, ..Default::default() };
    for (path, member) in members {
        match member {
            Member::File { data, mode } => {
                let digest = f.of(&data);
                result.output_files.push(re::OutputFile {
                    path,
                    digest: Some(digest.clone()),
                    is_executable: mode & 0o111 != 0,
                    node_properties: Some(re::NodeProperties {
                        unix_mode: Some(UInt32Value { value: mode }),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
                blobs.push((digest, data));
            }
            Member::Link(target) => {
                result.output_symlinks.push(re::OutputSymlink { path, target, node_properties: None });
            }
        }
    }
    let log = f.of(&entry.log);
    blobs.push((log.clone(), entry.log));
    result.stdout_digest = Some(log);
    let header = serde_json::to_vec(&entry.header).map_err(|e| e.to_string())?;
    let header_digest = f.of(&header);
    blobs.push((header_digest.clone(), header));
    let end_ms = entry.header.created_unix_ms;
    let start_ms = end_ms.saturating_sub(entry.header.duration_ms);
    let mut meta = re::ExecutedActionMetadata {
        worker: WORKER.into(),
        execution_start_timestamp: Some(timestamp(start_ms)),
        execution_completed_timestamp: Some(timestamp(end_ms)),
        auxiliary_metadata: vec![Any { type_url: HEADER_TYPE.into(), value: header_digest.encode_to_vec() }],
        ..Default::default()
    };
    if let Some(k) = signing_key {
        result.execution_metadata = Some(meta.clone());
        let sig = sign::sign(k, action, &result);
        meta.auxiliary_metadata.push(Any { type_url: sign::SIGNATURE_TYPE.into(), value: sig });
    }
    result.execution_metadata = Some(meta);
    Ok((result, blobs))
}

/// The digests a stored result needs downloaded to become an entry: the
/// header and the log, and with `outputs` every output file.
pub(super) fn needed(result: &re::ActionResult, outputs: bool) -> Result<Vec<re::Digest>, String> {
    let mut out = vec![header_digest(result)?];
    out.extend(result.stdout_digest.clone());
    if outputs {
        out.extend(result.output_files.iter().filter_map(|f| f.digest.clone()));
    }
    Ok(out)
}

/// The `auxiliary_metadata` entry of `type_url`, if the result has one.
pub(super) fn aux<'a>(result: &'a re::ActionResult, type_url: &str) -> Option<&'a Any> {
    result.execution_metadata.iter().flat_map(|m| &m.auxiliary_metadata).find(|a| a.type_url == type_url)
}

fn header_digest(result: &re::ActionResult) -> Result<re::Digest, String> {
    let aux = aux(result, HEADER_TYPE).ok_or("the action result was not written by vx (it has no entry header)")?;
    re::Digest::decode(aux.value.as_slice()).map_err(|e| format!("unreadable entry header digest: {e}"))
}

type Downloaded = std::collections::HashMap<String, Vec<u8>>;

/// The header of `key`'s entry and its log, from a stored result and its
/// downloaded blobs; the header must be the key's.
fn header_and_log(
    key: &CacheKey,
    result: &re::ActionResult,
    blobs: &Downloaded,
) -> Result<(EntryHeader, Vec<u8>), String> {
    let blob = |d: &re::Digest| blobs.get(&d.hash).ok_or_else(|| format!("blob {} was not downloaded", show(d)));
    let header: EntryHeader =
        serde_json::from_slice(blob(&header_digest(result)?)?).map_err(|e| format!("unreadable entry header: {e}"))?;
    if &header.key != key {
        return Err(format!("the stored entry is for key {}, not {key}", header.key));
    }
    let log = match &result.stdout_digest {
        Some(d) => blob(d)?.clone(),
        None => result.stdout_raw.clone(),
    };
    Ok((header, log))
}

/// The encoded vx entry of `key` without its outputs' bytes (its archive
/// empty; its header still lists each output and its BLAKE3), for a hit
/// whose outputs are not downloaded (`--download`). The result must name
/// the outputs the header lists; their bytes are checked against the
/// header when they are fetched ([`from_result`]).
pub(super) fn from_result_without_outputs(
    key: &CacheKey,
    result: &re::ActionResult,
    blobs: &Downloaded,
) -> Result<Vec<u8>, String> {
    let (header, log) = header_and_log(key, result, blobs)?;
    let mut named: Vec<(&str, Option<&str>)> = result.output_files.iter().map(|f| (f.path.as_str(), None)).collect();
    named.extend(result.output_symlinks.iter().map(|l| (l.path.as_str(), Some(l.target.as_str()))));
    named.sort();
    let mut listed: Vec<(&str, Option<&str>)> =
        header.outputs.iter().map(|o| (o.path.as_str(), o.link.as_deref())).collect();
    listed.sort();
    if named != listed {
        return Err("the result's outputs are not the ones its entry header lists".into());
    }
    Ok(Entry::encode(header, &log, &[]))
}

/// Rebuilds the encoded vx entry of `key` from a stored result and its
/// downloaded blobs, checking that every output is the one the header lists.
pub(super) fn from_result(key: &CacheKey, result: &re::ActionResult, blobs: &Downloaded) -> Result<Vec<u8>, String> {
    let blob = |d: &re::Digest| blobs.get(&d.hash).ok_or_else(|| format!("blob {} was not downloaded", show(d)));
    let (header, log) = header_and_log(key, result, blobs)?;
    let mut members = BTreeMap::new();
    for f in &result.output_files {
        let digest = f.digest.as_ref().ok_or_else(|| format!("output {} has no digest", f.path))?;
        let data = blob(digest)?.clone();
        let mode = f
            .node_properties
            .as_ref()
            .and_then(|p| p.unix_mode.as_ref())
            .map_or(if f.is_executable { 0o755 } else { 0o644 }, |m| m.value & 0o7777);
        members.insert(f.path.clone(), Member::File { data, mode });
    }
    for l in &result.output_symlinks {
        members.insert(l.path.clone(), Member::Link(l.target.clone()));
    }
    check_against_header(&header, &members)?;
    let archive = pack_members(&members).map_err(|e| e.to_string())?;
    Ok(Entry::encode(header, &log, &archive))
}

/// Each output must be exactly the file (BLAKE3) or link the header names.
fn check_against_header(header: &EntryHeader, members: &BTreeMap<String, Member>) -> Result<(), String> {
    if header.outputs.len() != members.len() {
        return Err(format!("the result has {} outputs, its header lists {}", members.len(), header.outputs.len()));
    }
    for out in &header.outputs {
        let ok = match (members.get(&out.path), &out.link) {
            (Some(Member::File { data, .. }), None) => blake3::hash(data).to_hex().as_str() == out.hash,
            (Some(Member::Link(target)), Some(link)) => target == link,
            _ => false,
        };
        if !ok {
            return Err(format!("output {} does not match the entry header", out.path));
        }
    }
    Ok(())
}

fn timestamp(unix_ms: u64) -> Timestamp {
    Timestamp { seconds: (unix_ms / 1000) as i64, nanos: ((unix_ms % 1000) * 1_000_000) as i32 }
}
