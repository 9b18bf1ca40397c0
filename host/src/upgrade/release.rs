//! Release metadata: its JSON shape, the platform this vx was built for,
//! and version comparison.
//!
//! ```json
//! { "version": "0.2.0",
//!   "assets": [ { "target": "x86_64-unknown-linux-gnu", "url": "vx-x86_64-unknown-linux-gnu",
//!                 "size": 12345, "sha256": "…", "blake3": "…" } ] }
//! ```
//!
//! An asset `url` may be relative to the metadata URL. Each asset needs at
//! least one checksum; both are checked when both are given.

use serde::Deserialize;

use super::error::UpgradeError;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Release {
    pub version: String,
    /// Accepted, so that `deny_unknown_fields` does not refuse metadata
    /// with notes; vx does not show them.
    #[serde(default)]
    #[expect(dead_code, reason = "read only so that deny_unknown_fields accepts it")]
    pub notes: Option<String>,
    pub assets: Vec<Asset>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Asset {
    /// A target triple, e.g. `x86_64-unknown-linux-gnu`.
    pub target: String,
    pub url: String,
    pub size: Option<u64>,
    pub sha256: Option<String>,
    pub blake3: Option<String>,
}

impl Release {
    /// Parses the body served at `url`, refusing anything that is not the
    /// expected JSON (an HTML portal page served with 200, a proxy error).
    pub(crate) fn parse(url: &str, body: &[u8]) -> Result<Release, UpgradeError> {
        let release: Release = serde_json::from_slice(body).map_err(|source| {
            let start = String::from_utf8_lossy(&body[..body.len().min(40)]).replace(['\n', '\r'], " ");
            let looks = if start.trim_start().starts_with('<') { " (it looks like an HTML page)" } else { "" };
            UpgradeError::NotMetadata { url: url.to_string(), looks, start, source }
        })?;
        if release.version.trim().is_empty() {
            return Err(UpgradeError::EmptyVersion { url: url.to_string() });
        }
        Ok(release)
    }

    /// The asset for `target`, with a checksum, its URL made absolute.
    pub(crate) fn asset_for(&self, url: &str, target: &str) -> Result<Asset, UpgradeError> {
        let Some(asset) = self.assets.iter().find(|a| a.target == target) else {
            let have: Vec<&str> = self.assets.iter().map(|a| a.target.as_str()).collect();
            return Err(UpgradeError::NoAsset {
                url: url.to_string(),
                version: self.version.clone(),
                target: target.to_string(),
                have: if have.is_empty() { "none".to_string() } else { have.join(", ") },
            });
        };
        if asset.sha256.is_none() && asset.blake3.is_none() {
            return Err(UpgradeError::NoChecksum { url: url.to_string(), target: target.to_string() });
        }
        let mut asset = asset.clone();
        asset.url = resolve(url, &asset.url);
        Ok(asset)
    }
}

/// `href` relative to `base` (a URL), unless it is absolute already.
fn resolve(base: &str, href: &str) -> String {
    if href.contains("://") {
        return href.to_string();
    }
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    if let Some(path) = href.strip_prefix('/') {
        let host_end = base[scheme_end..].find('/').map_or(base.len(), |i| scheme_end + i);
        return format!("{}/{path}", &base[..host_end]);
    }
    match base[scheme_end..].rfind('/') {
        Some(i) => format!("{}/{href}", &base[..scheme_end + i]),
        None => format!("{base}/{href}"),
    }
}

/// The target triple this vx was built for.
pub(crate) fn platform() -> String {
    let arch = std::env::consts::ARCH;
    let rest = match std::env::consts::OS {
        "linux" if cfg!(target_env = "musl") => "unknown-linux-musl",
        "linux" => "unknown-linux-gnu",
        "macos" => "apple-darwin",
        "windows" => "pc-windows-msvc",
        "freebsd" => "unknown-freebsd",
        other => other,
    };
    format!("{arch}-{rest}")
}

/// Whether `latest` is a higher version than `current` (dotted numbers; a
/// leading `v` and any pre-release suffix are ignored).
pub(crate) fn is_newer(latest: &str, current: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.trim()
            .trim_start_matches('v')
            .split(['-', '+'])
            .next()
            .unwrap_or("")
            .split('.')
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    let (a, b) = (parts(latest), parts(current));
    let len = a.len().max(b.len());
    let pad = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..len).map(|i| pad(&a, i).cmp(&pad(&b, i))).find(|o| o.is_ne()) == Some(std::cmp::Ordering::Greater)
}

/// The release feed when `VX_RELEASE_URL` is not set.
pub(crate) const DEFAULT_RELEASE_URL: &str = "https://github.com/vx-dev/vx/releases/latest/download/release.json";

/// The feed URL: `VX_RELEASE_URL`, else the project's.
pub(crate) fn release_url() -> String {
    std::env::var("VX_RELEASE_URL").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| DEFAULT_RELEASE_URL.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_asset_urls_resolve_against_the_feed() {
        let base = "http://127.0.0.1:9/releases/release.json";
        assert_eq!(resolve(base, "vx-bin"), "http://127.0.0.1:9/releases/vx-bin");
        assert_eq!(resolve(base, "/dl/vx"), "http://127.0.0.1:9/dl/vx");
        assert_eq!(resolve(base, "https://x.invalid/vx"), "https://x.invalid/vx");
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(is_newer("0.10.0", "0.9.1"));
        assert!(is_newer("v1.0.0", "0.99"));
        assert!(!is_newer("0.1.0", "0.1.0"));
        assert!(!is_newer("0.1.0-rc.1", "0.1.0"));
    }

    #[test]
    fn html_is_refused_with_the_url() {
        let e = Release::parse("http://h/r.json", b"<!DOCTYPE html><html>Log in</html>").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("http://h/r.json: the response is not release metadata (it looks like an HTML page)")
        );
    }
}
