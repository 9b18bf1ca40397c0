//! `vx plugin publish FILE oci://…`: the component is checked as `vx
//! plugin add` checks it (it loads with no grant and answers `info`), then
//! its config, its layer and the manifest are pushed in the Wasm OCI
//! layout. Blobs the registry has already are not sent again.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::client::{Registry, sha256_digest};
use super::error::OciError;
use super::manifest::{
    CONFIG_MEDIA_TYPE, ComponentInfo, Descriptor, LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, Manifest, WasmConfig, rfc3339,
};
use super::reference::Reference;
use crate::error::{Error, Result};
use crate::plugin::{World, load_bytes_ungranted, read_plugin_file};

/// A published component.
#[derive(Debug)]
pub(crate) struct Published {
    /// The reference as given, now pinned to the manifest's digest.
    pub reference: Reference,
    pub world: World,
    pub export: String,
    pub version: String,
    pub size: usize,
}

pub(crate) fn publish(cwd: &Path, file: &Path, target: &str, plain_http: bool) -> Result<Published> {
    let reference = Reference::parse(target).map_err(OciError::Reference)?;
    if reference.digest.is_some() {
        return Err(Error::usage(format!("`{target}` names a digest; a digest is what publishing makes"))
            .with_hint("publish to a tag, e.g. oci://REGISTRY/NAMESPACE/NAME:1.0.0"));
    }
    let tag = reference.tag.clone().unwrap_or_default();
    let name = reference.name().to_string();
    let (bytes, hash) = read_plugin_file(&name, &cwd.join(file))?;
    let plugin = load_bytes_ungranted(&name, &bytes, hash)?;
    let info = plugin.info()?;

    let layer_digest = sha256_digest(&bytes);
    let config = WasmConfig {
        created: rfc3339(created_secs()),
        author: None,
        architecture: "wasm".to_string(),
        os: "wasip2".to_string(),
        layer_digests: vec![layer_digest.clone()],
        component: Some(ComponentInfo { exports: vec![plugin.export.clone()], imports: Vec::new(), target: None }),
    };
    let config_bytes = serde_json::to_vec(&config).map_err(|e| Error::internal(format!("config JSON: {e}")))?;
    let mut annotations = BTreeMap::new();
    annotations.insert("org.opencontainers.image.title".to_string(), info.name.clone());
    annotations.insert("org.opencontainers.image.version".to_string(), info.version.clone());
    annotations.insert("org.opencontainers.image.created".to_string(), config.created.clone());
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_string()),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.to_string(),
            digest: sha256_digest(&config_bytes),
            size: config_bytes.len() as u64,
        },
        layers: vec![Descriptor {
            media_type: LAYER_MEDIA_TYPE.to_string(),
            digest: layer_digest,
            size: bytes.len() as u64,
        }],
        annotations,
    };
    let manifest_bytes = serde_json::to_vec(&manifest).map_err(|e| Error::internal(format!("manifest JSON: {e}")))?;

    let mut registry = Registry::new(&reference, true, plain_http)?;
    registry.push_blob(&config_bytes, &format!("pushing the config of {reference}"))?;
    registry.push_blob(&bytes, &format!("pushing the wasm layer of {reference}"))?;
    registry.put_manifest(&tag, MANIFEST_MEDIA_TYPE, &manifest_bytes)?;
    Ok(Published {
        reference: reference.with_digest(&sha256_digest(&manifest_bytes)),
        world: plugin.world,
        export: plugin.export.clone(),
        version: info.version,
        size: bytes.len(),
    })
}

/// `SOURCE_DATE_EPOCH` when set (reproducible builds: the same component
/// then publishes to the same digest), else now.
fn created_secs() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}
