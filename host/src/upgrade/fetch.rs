//! Downloading over HTTP(S) (ureq, rustls): a body is returned only when it
//! arrived whole, with status 200 and as many bytes as `Content-Length`
//! (and the caller's expected size) said.

use std::io::Read;
use std::time::Duration;

use crate::error::{Error, Result};

/// Bodies larger than this are refused (release binaries are far smaller).
const MAX_BODY: u64 = 1 << 30;

/// A complete response body.
#[derive(Debug)]
pub struct Fetched {
    pub body: Vec<u8>,
}

/// GETs `url`; `expected` is a size the caller knows from elsewhere.
pub fn fetch(url: &str, expected: Option<u64>) -> Result<Fetched> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(600)))
        .user_agent(concat!("vx/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut response = agent.get(url).call().map_err(|e| {
        Error::internal(format!("{url}: request failed: {e}")).with_hint("check the network and the URL")
    })?;
    let status = response.status();
    if status != 200 {
        return Err(Error::internal(format!("{url}: the server answered {status}, not 200"))
            .with_hint("check the URL (VX_RELEASE_URL) and try again later"));
    }
    let declared = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut body = Vec::new();
    let read = response.body_mut().with_config().limit(MAX_BODY).reader().read_to_end(&mut body);
    let got = body.len() as u64;
    if let Err(e) = read {
        let of = declared.map_or_else(String::new, |d| format!(" of {d}"));
        return Err(Error::internal(format!("{url}: the download broke off after {got}{of} bytes: {e}"))
            .with_hint("the download is truncated; try again"));
    }
    for (what, want) in [("Content-Length", declared), ("the release metadata's size", expected)] {
        if let Some(want) = want
            && want != got
        {
            return Err(Error::internal(format!("{url}: got {got} bytes but {what} says {want}"))
                .with_hint("the download is truncated or altered; try again"));
        }
    }
    Ok(Fetched { body })
}
