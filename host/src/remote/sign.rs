//! Signatures over remote cache entries. With `VX_REMOTE_SIGNING_KEY` set,
//! every entry vx writes carries an HMAC-SHA256 over the action digest and
//! every digest the result names; a read verifies it before trusting any
//! byte. The blobs themselves are content-addressed, so signing their
//! digests signs their contents. docs/remote.md has the threat model.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::re;

/// The variable holding the shared signing key.
pub(crate) const SIGNING_KEY_VAR: &str = "VX_REMOTE_SIGNING_KEY";
/// The `auxiliary_metadata` type of a signature.
pub(crate) const SIGNATURE_TYPE: &str = "type.vx.dev/vx.remote.v1.Signature";

type HmacSha256 = Hmac<Sha256>;

/// The signing key from the environment, if one is set (an empty one is
/// treated as unset so `VX_REMOTE_SIGNING_KEY=` does not sign with "").
pub(crate) fn key_from_env() -> Option<Vec<u8>> {
    std::env::var_os(SIGNING_KEY_VAR).map(|v| v.into_encoded_bytes()).filter(|k| !k.is_empty())
}

/// What the signature covers: the action, the exit code, and every digest
/// and path the result names, in a fixed order, each length-prefixed.
fn canonical(action: &re::Digest, result: &re::ActionResult) -> Vec<u8> {
    let mut out = Vec::new();
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    let digest =
        |d: &Option<re::Digest>| d.as_ref().map(|d| format!("{}/{}", d.hash, d.size_bytes)).unwrap_or_default();
    field(b"vx-remote-signature-v1");
    field(format!("{}/{}", action.hash, action.size_bytes).as_bytes());
    field(&result.exit_code.to_le_bytes());
    field(digest(&result.stdout_digest).as_bytes());
    field(digest(&result.stderr_digest).as_bytes());
    let mut files: Vec<_> = result.output_files.iter().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for f in files {
        let mode = f.node_properties.as_ref().and_then(|p| p.unix_mode.as_ref()).map_or(0, |m| m.value);
        field(f.path.as_bytes());
        field(digest(&f.digest).as_bytes());
        field(&[u8::from(f.is_executable)]);
        field(&mode.to_le_bytes());
    }
    let mut links: Vec<_> = result.output_symlinks.iter().collect();
    links.sort_by(|a, b| a.path.cmp(&b.path));
    for l in links {
        field(l.path.as_bytes());
        field(l.target.as_bytes());
    }
    let mut dirs: Vec<_> = result.output_directories.iter().collect();
    dirs.sort_by(|a, b| a.path.cmp(&b.path));
    for d in dirs {
        field(d.path.as_bytes());
        field(digest(&d.tree_digest).as_bytes());
    }
    for aux in result.execution_metadata.iter().flat_map(|m| &m.auxiliary_metadata) {
        if aux.type_url != SIGNATURE_TYPE {
            field(aux.type_url.as_bytes());
            field(&aux.value);
        }
    }
    out
}

/// The signature of `result` stored under `action`.
pub(crate) fn sign(key: &[u8], action: &re::Digest, result: &re::ActionResult) -> Vec<u8> {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(&canonical(action, result));
    mac.finalize().into_bytes().to_vec()
}

/// Whether `result` carries a valid signature; the error says what is wrong.
pub(crate) fn verify(key: &[u8], action: &re::Digest, result: &re::ActionResult) -> Result<(), &'static str> {
    let sig = super::entry::aux(result, SIGNATURE_TYPE).ok_or("it is not signed")?;
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(&canonical(action, result));
    mac.verify_slice(&sig.value).map_err(|_| "its signature does not match VX_REMOTE_SIGNING_KEY")
}

#[cfg(test)]
mod tests {
    use super::*;
    use bazel_remote_apis::google::protobuf::Any;

    fn signed(key: &[u8]) -> (re::Digest, re::ActionResult) {
        let action = re::Digest { hash: "ab".repeat(32), size_bytes: 10 };
        let mut result = re::ActionResult {
            output_files: vec![re::OutputFile {
                path: "dist/a.js".into(),
                digest: Some(re::Digest { hash: "cd".repeat(32), size_bytes: 3 }),
                ..Default::default()
            }],
            execution_metadata: Some(re::ExecutedActionMetadata::default()),
            ..Default::default()
        };
        let sig = sign(key, &action, &result);
        let meta = result.execution_metadata.as_mut().unwrap();
        meta.auxiliary_metadata.push(Any { type_url: SIGNATURE_TYPE.into(), value: sig });
        (action, result)
    }

    #[test]
    fn verifies_and_refuses_tampering() {
        let (action, result) = signed(b"k1");
        assert_eq!(verify(b"k1", &action, &result), Ok(()));
        assert!(verify(b"k2", &action, &result).is_err(), "another key");
        let mut swapped = result.clone();
        swapped.output_files[0].digest.as_mut().unwrap().hash = "ef".repeat(32);
        assert!(verify(b"k1", &action, &swapped).is_err(), "a swapped blob");
        let mut moved = result.clone();
        moved.output_files[0].path = "dist/b.js".into();
        assert!(verify(b"k1", &action, &moved).is_err(), "a renamed output");
        let other = re::Digest { hash: "00".repeat(32), size_bytes: 10 };
        assert!(verify(b"k1", &other, &result).is_err(), "replayed under another action");
        let mut unsigned = result;
        unsigned.execution_metadata.as_mut().unwrap().auxiliary_metadata.clear();
        assert_eq!(verify(b"k1", &action, &unsigned), Err("it is not signed"));
    }
}
