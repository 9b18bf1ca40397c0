//! The two things `vx upgrade` does: compare this vx with the feed's
//! latest release, and install that release's asset for this platform.

use std::path::PathBuf;

use super::error::UpgradeError;
use super::{Release, fetch, install, install_target, is_newer, platform};

/// This vx against the latest release of the feed.
#[derive(Debug, Clone)]
pub(crate) struct Status {
    /// The feed's URL.
    pub url: String,
    pub current: &'static str,
    pub latest: Release,
    /// The target triple this vx was built for.
    pub platform: String,
}

impl Status {
    pub(crate) fn newer(&self) -> bool {
        is_newer(&self.latest.version, self.current)
    }

    /// Whether the latest release has an asset for this platform.
    pub(crate) fn has_asset(&self) -> bool {
        self.latest.assets.iter().any(|a| a.target == self.platform)
    }
}

/// Fetches the release metadata at `url`.
pub(crate) fn check(url: &str) -> Result<Status, UpgradeError> {
    let latest = Release::parse(url, &fetch(url, None)?.body)?;
    Ok(Status { url: url.to_string(), current: env!("CARGO_PKG_VERSION"), latest, platform: platform() })
}

/// Downloads, verifies and installs the latest release's asset for this
/// platform over the installed binary; returns the path it replaced.
pub(crate) fn install_latest(status: &Status) -> Result<PathBuf, UpgradeError> {
    let asset = status.latest.asset_for(&status.url, &status.platform)?;
    let bytes = fetch(&asset.url, asset.size)?.body;
    let path = install_target()?;
    install(&asset, &bytes, &path)?;
    Ok(path)
}
