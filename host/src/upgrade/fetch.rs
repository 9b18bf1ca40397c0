//! Downloading over HTTP(S) (ureq, rustls): a body is returned only when it
//! arrived whole, with status 200 and as many bytes as `Content-Length`
//! (and the caller's expected size) said.

use std::io::Read;
use std::time::Duration;

use super::error::UpgradeError;

/// Bodies larger than this are refused (release binaries are far smaller).
const MAX_BODY: u64 = 1 << 30;

/// A complete response body.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub body: Vec<u8>,
}

/// GETs `url`; `expected` is a size the caller knows from elsewhere.
pub(crate) fn fetch(url: &str, expected: Option<u64>) -> Result<Fetched, UpgradeError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(600)))
        .user_agent(concat!("vx/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut response =
        agent.get(url).call().map_err(|e| UpgradeError::Request { url: url.to_string(), source: Box::new(e) })?;
    let status = response.status();
    if status != 200 {
        return Err(UpgradeError::Status { url: url.to_string(), status });
    }
    let declared = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut body = Vec::new();
    let read = response.body_mut().with_config().limit(MAX_BODY).reader().read_to_end(&mut body);
    let got = body.len() as u64;
    if let Err(source) = read {
        return Err(UpgradeError::BrokeOff { url: url.to_string(), got, declared, source });
    }
    for (what, want) in [("Content-Length", declared), ("the release metadata's size", expected)] {
        if let Some(want) = want
            && want != got
        {
            return Err(UpgradeError::Truncated { url: url.to_string(), got, what, want });
        }
    }
    Ok(Fetched { body })
}
