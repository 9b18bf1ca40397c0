//! The Wasm OCI artifact layout (CNCF TAG Runtime's "Wasm OCI Artifact",
//! the one `wkg oci`, wasm-pkg-tools and the oci-wasm crate write): an OCI
//! image manifest whose config has media type
//! `application/vnd.wasm.config.v0+json` and whose one layer is the
//! component itself, `application/wasm`. The config says
//! `architecture: wasm`, `os: wasip2`, the layer digests and the
//! component's exports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::OciError;

pub(crate) const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub(crate) const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
pub(crate) const LAYER_MEDIA_TYPE: &str = "application/wasm";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Manifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The config blob, field for field as the Wasm OCI artifact spec has it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WasmConfig {
    pub created: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    pub architecture: String,
    pub os: String,
    pub layer_digests: Vec<String>,
    pub component: Option<ComponentInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ComponentInfo {
    pub exports: Vec<String>,
    pub imports: Vec<String>,
    pub target: Option<String>,
}

impl Manifest {
    /// Parses a fetched manifest and checks it is a Wasm component
    /// artifact: the OCI manifest type, the Wasm config, one wasm layer.
    pub(crate) fn parse(bytes: &[u8], content_type: Option<&str>, what: &str) -> Result<Manifest, OciError> {
        let not_wasm = |why: String| OciError::NotWasm { what: what.to_string(), why };
        let shown = |t: Option<&str>| t.unwrap_or("none").to_string();
        if let Some(t) = content_type.filter(|t| *t != MANIFEST_MEDIA_TYPE && *t != "application/json") {
            return Err(not_wasm(format!("its manifest type is {t}, not {MANIFEST_MEDIA_TYPE}")));
        }
        let manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| not_wasm(format!("its manifest is not an OCI image manifest ({e})")))?;
        if manifest.schema_version != 2 || manifest.media_type.as_deref().is_some_and(|t| t != MANIFEST_MEDIA_TYPE) {
            return Err(not_wasm(format!(
                "its manifest type is {} (schema {}), not {MANIFEST_MEDIA_TYPE}",
                shown(manifest.media_type.as_deref()),
                manifest.schema_version
            )));
        }
        if manifest.config.media_type != CONFIG_MEDIA_TYPE {
            return Err(not_wasm(format!(
                "its config type is {}, not {CONFIG_MEDIA_TYPE}",
                manifest.config.media_type
            )));
        }
        match manifest.layers.as_slice() {
            [layer] if layer.media_type == LAYER_MEDIA_TYPE => Ok(manifest),
            [layer] => Err(not_wasm(format!("its layer type is {}, not {LAYER_MEDIA_TYPE}", layer.media_type))),
            layers => Err(not_wasm(format!("it has {} layers, not one", layers.len()))),
        }
    }

    /// The one wasm layer (`parse` checked there is one).
    pub(crate) fn layer(&self) -> &Descriptor {
        &self.layers[0]
    }
}

/// `created` as RFC 3339 UTC for `secs` since the Unix epoch (no date
/// crate for one field): the civil date by Howard Hinnant's algorithm.
pub(crate) fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(config: &str, layers: &[&str]) -> Vec<u8> {
        let d =
            |t: &str| serde_json::json!({"mediaType": t, "digest": format!("sha256:{}", "a".repeat(64)), "size": 1});
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": d(config),
            "layers": layers.iter().map(|l| d(l)).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    #[test]
    fn accepts_the_wasm_layout_only() {
        let ok = manifest(CONFIG_MEDIA_TYPE, &[LAYER_MEDIA_TYPE]);
        assert!(Manifest::parse(&ok, Some(MANIFEST_MEDIA_TYPE), "x").is_ok());
        let image =
            manifest("application/vnd.oci.image.config.v1+json", &["application/vnd.oci.image.layer.v1.tar+gzip"]);
        let err = Manifest::parse(&image, Some(MANIFEST_MEDIA_TYPE), "x").unwrap_err().to_string();
        assert!(err.contains("config type is application/vnd.oci.image.config.v1+json"), "{err}");
        let two = manifest(CONFIG_MEDIA_TYPE, &[LAYER_MEDIA_TYPE, LAYER_MEDIA_TYPE]);
        assert!(Manifest::parse(&two, None, "x").unwrap_err().to_string().contains("2 layers"));
        let err = Manifest::parse(&ok, Some("application/vnd.oci.image.index.v1+json"), "x").unwrap_err();
        assert!(err.to_string().contains("index"), "{err}");
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_767_225_599), "2025-12-31T23:59:59Z");
    }
}
