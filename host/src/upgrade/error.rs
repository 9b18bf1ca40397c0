//! What stops `vx upgrade`: a download that failed or arrived incomplete,
//! metadata that is not a release, no verified asset for this platform, or
//! a binary that could not be put in place. Each names the URL (or file)
//! and becomes an internal error (exit 1) with a hint where one helps.

use std::path::PathBuf;

use crate::error::Error;

#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    #[error("{url}: request failed: {source}")]
    Request { url: String, source: Box<ureq::Error> },
    #[error("{url}: the server answered {status}, not 200")]
    Status { url: String, status: ureq::http::StatusCode },
    #[error("{url}: the download broke off after {got}{of} bytes: {source}", of = of_declared(.declared))]
    BrokeOff { url: String, got: u64, declared: Option<u64>, source: std::io::Error },
    /// The body's length differs from what `what` (a header, the metadata) says.
    #[error("{url}: got {got} bytes but {what} says {want}")]
    Truncated { url: String, got: u64, what: &'static str, want: u64 },
    #[error("{url}: the response is not release metadata{looks}: {source}; it starts with `{start}`")]
    NotMetadata { url: String, looks: &'static str, start: String, source: serde_json::Error },
    #[error("{url}: the release metadata has an empty `version`")]
    EmptyVersion { url: String },
    #[error("{url}: release {version} has no asset for this platform ({target}); it has: {have}")]
    NoAsset { url: String, version: String, target: String, have: String },
    #[error("{url}: the asset for {target} has no sha256 or blake3 checksum; refusing to install it unverified")]
    NoChecksum { url: String, target: String },
    #[error("{url}: {algorithm} mismatch: the metadata says {want}, the download hashes to {got}")]
    ChecksumMismatch { url: String, algorithm: &'static str, want: String, got: String },
    #[error("failed to find the running vx binary: {0}")]
    CurrentExe(#[source] std::io::Error),
    /// A file operation on the new binary or its target: `resolve`,
    /// `create`, `write`, `make … executable`, `sync`, `replace`.
    #[error("failed to {action} {}: {source}", .path.display())]
    File { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error("failed to make {} executable: {source}", .path.display())]
    MakeExecutable { path: PathBuf, source: std::io::Error },
}

fn of_declared(declared: &Option<u64>) -> String {
    declared.map_or_else(String::new, |d| format!(" of {d}"))
}

impl From<UpgradeError> for Error {
    fn from(e: UpgradeError) -> Error {
        let hint = match &e {
            UpgradeError::Request { .. } => Some("check the network and the URL"),
            UpgradeError::Status { .. } => Some("check the URL (VX_RELEASE_URL) and try again later"),
            UpgradeError::BrokeOff { .. } => Some("the download is truncated; try again"),
            UpgradeError::Truncated { .. } => Some("the download is truncated or altered; try again"),
            UpgradeError::NotMetadata { .. } => {
                Some("a captive portal or proxy may be answering: check the network, or set VX_RELEASE_URL")
            }
            UpgradeError::NoAsset { .. } => Some("build vx from source for this platform"),
            UpgradeError::ChecksumMismatch { .. } => {
                Some("the download is corrupt or was altered; nothing was installed")
            }
            UpgradeError::EmptyVersion { .. }
            | UpgradeError::NoChecksum { .. }
            | UpgradeError::CurrentExe(_)
            | UpgradeError::File { .. }
            | UpgradeError::MakeExecutable { .. } => None,
        };
        let error = Error::internal(e.to_string());
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}
