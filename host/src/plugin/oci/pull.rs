//! Pulling a component: the manifest (its digest checked against an
//! `@sha256:` reference), its media types, then the one wasm layer, whose
//! bytes must hash to the manifest's layer digest. Only checked bytes are
//! returned; nothing is written here.

use super::client::{Registry, sha256_digest};
use super::error::OciError;
use super::manifest::Manifest;
use super::reference::Reference;
use crate::plugin::MAX_PLUGIN_SIZE;

/// A component pulled and verified.
#[derive(Debug)]
pub(crate) struct Pulled {
    pub bytes: Vec<u8>,
    /// The manifest's digest: what `vx.lock` pins the reference to.
    pub manifest_digest: String,
}

pub(crate) fn pull(reference: &Reference, plain_http: bool) -> Result<Pulled, OciError> {
    let mut registry = Registry::new(reference, false, plain_http)?;
    let fetched = registry.manifest(reference.target())?;
    let manifest_digest = sha256_digest(&fetched.bytes);
    // The reference's digest, else the one the registry says it served
    // (`Docker-Content-Digest`): the bytes must hash to it.
    if let Some(want) = reference.digest.as_ref().or(fetched.digest.as_ref().filter(|d| d.starts_with("sha256:")))
        && *want != manifest_digest
    {
        return Err(OciError::Digest {
            what: format!("the manifest of {reference}"),
            expected: want.clone(),
            got: manifest_digest,
        });
    }
    let manifest = Manifest::parse(&fetched.bytes, fetched.content_type.as_deref(), &reference.to_string())?;
    let layer = manifest.layer();
    let what = format!("the wasm layer of {reference}");
    if layer.size > MAX_PLUGIN_SIZE {
        return Err(OciError::TooLarge { what, limit: MAX_PLUGIN_SIZE });
    }
    let bytes = registry.blob(&layer.digest, layer.size, &what)?;
    Ok(Pulled { bytes, manifest_digest })
}
