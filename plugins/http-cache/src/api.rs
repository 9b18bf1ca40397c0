//! The requests and how their answers are read. URL building and status
//! handling are plain functions, tested on the host.

use std::io::{Read, Write};
use std::time::Duration;

use vx_plugin_sdk::Error;
use vx_plugin_sdk::http::{Method, Request, Response, Url};

use crate::Config;

/// The JSON Schema of [`Config`], for `vx plugin add`.
pub const CONFIG_SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"required":["url"],"properties":{"url":{"type":"string"},"token-env":{"type":"string"},"team-id":{"type":"string"},"slug":{"type":"string"},"timeout-secs":{"type":"integer","minimum":1}}}"#;

/// Error bodies are read up to this much, for the message.
const MAX_ERROR_BODY: usize = 4096;

/// The environment variable the token is read from.
pub fn token_var(config: &Config) -> &str {
    config.token_env.as_deref().unwrap_or("TURBO_TOKEN")
}

/// One configured server.
#[derive(Debug)]
pub struct Api {
    base: String,
    query: String,
    token: String,
    timeout: Option<Duration>,
}

impl Api {
    /// Checks the config; a missing token is `denied`, naming the grant.
    pub fn new(config: &Config, token: Option<String>) -> Result<Api, Error> {
        let url = Url::parse(&config.url).map_err(|e| e.context("config.url"))?;
        if url.path_and_query.contains('?') {
            return Err(Error::invalid_config("config.url: give the base URL without a query; use team-id or slug"));
        }
        let var = token_var(config);
        let token = token.filter(|t| !t.is_empty()).ok_or_else(|| {
            Error::denied(format!(
                "the token variable {var} is not set or not granted; grant it with env = [\"{var}\"] in this plugin's [plugins.NAME] table (or set config.token-env)"
            ))
        })?;
        let query = match (&config.team_id, &config.slug) {
            (Some(team), _) => format!("?teamId={}", encode(team)),
            (None, Some(slug)) => format!("?slug={}", encode(slug)),
            (None, None) => String::new(),
        };
        let base = format!("{}{}", url.origin(), url.path_and_query.trim_end_matches('/'));
        Ok(Api { base, query, token, timeout: config.timeout_secs.map(Duration::from_secs) })
    }

    /// `BASE/v8/artifacts/KEY?teamId=…`.
    pub fn artifact_url(&self, key: &str) -> Result<String, Error> {
        if key.is_empty() || key.len() > 256 || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(Error::failed(format!("refusing the key {key:?}: not a plain artifact hash")));
        }
        Ok(format!("{}/v8/artifacts/{key}{}", self.base, self.query))
    }

    fn request(&self, method: Method, key: &str) -> Result<Request, Error> {
        let mut request =
            Request::new(method, &self.artifact_url(key)?)?.header("authorization", format!("Bearer {}", self.token));
        if let Some(t) = self.timeout {
            request = request.timeout(t);
        }
        Ok(request)
    }

    pub fn exists(&self, key: &str) -> Result<bool, Error> {
        let response = self.request(Method::Head, key)?.send()?;
        match response.status() {
            200..=299 => Ok(true),
            404 => Ok(false),
            _ => Err(status_error(response)),
        }
    }

    pub fn get(&self, key: &str, sink: &mut dyn Write) -> Result<bool, Error> {
        let mut response = self.request(Method::Get, key)?.send()?;
        match response.status() {
            200 => {
                std::io::copy(&mut response, sink)?;
                Ok(true)
            }
            404 => {
                response.discard();
                Ok(false)
            }
            _ => Err(status_error(response)),
        }
    }

    pub fn put(&self, key: &str, size: u64, source: &mut dyn Read) -> Result<(), Error> {
        let request = self.request(Method::Put, key)?.header("content-type", "application/octet-stream");
        let response = request.send_body(source, Some(size))?;
        match response.status() {
            200..=299 => {
                response.discard();
                Ok(())
            }
            _ => Err(status_error(response)),
        }
    }
}

/// An unexpected status as an error naming it, the request and what the
/// server said; 401/403 point at the token, 5xx and 429 are `unavailable`.
fn status_error(mut response: Response) -> Error {
    let status = response.status();
    let said = response
        .read_to_end(MAX_ERROR_BODY)
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    classify(status, response.request(), &said)
}

pub fn classify(status: u16, request: &str, said: &str) -> Error {
    let said: String = said.chars().take(300).collect();
    let tail = if said.is_empty() { String::new() } else { format!(": {said}") };
    match status {
        401 | 403 => {
            Error::failed(format!("{request}: the server refused the token ({status}){tail}; check the token and team"))
        }
        429 | 500..=599 => Error::unavailable(format!("{request}: the server answered {status}{tail}")),
        _ => Error::failed(format!("{request}: unexpected status {status}{tail}")),
    }
}

/// Percent-encodes a query value (everything but unreserved characters).
pub fn encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use vx_plugin_sdk::ErrorKind;

    fn config(url: &str) -> Config {
        Config { url: url.into(), token_env: None, team_id: Some("team a".into()), slug: None, timeout_secs: None }
    }

    #[test]
    fn urls_carry_the_team_and_refuse_odd_keys() {
        let api = Api::new(&config("http://127.0.0.1:3000/"), Some("t".into())).unwrap();
        assert_eq!(api.artifact_url("ab12").unwrap(), "http://127.0.0.1:3000/v8/artifacts/ab12?teamId=team%20a");
        assert!(api.artifact_url("../x").is_err());
        assert!(api.artifact_url("").is_err());
        let mut c = config("https://cache.acme.dev/prefix");
        c.team_id = None;
        c.slug = Some("web".into());
        let api = Api::new(&c, Some("t".into())).unwrap();
        assert_eq!(api.artifact_url("k").unwrap(), "https://cache.acme.dev/prefix/v8/artifacts/k?slug=web");
    }

    #[test]
    fn a_missing_token_is_denied_and_names_the_grant() {
        let e = Api::new(&config("http://x"), None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Denied);
        assert!(e.message().contains("env = [\"TURBO_TOKEN\"]"), "{}", e.message());
        let e = Api::new(&config("http://x?a=b"), Some("t".into())).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        assert_eq!(Api::new(&config("cache"), Some("t".into())).unwrap_err().kind(), ErrorKind::InvalidConfig);
    }

    #[test]
    fn statuses_become_errors_that_say_why() {
        let e = classify(401, "GET http://x/v8/artifacts/k", "Invalid authorization token");
        assert_eq!(e.kind(), ErrorKind::Failed);
        assert!(e.message().contains("refused the token (401): Invalid authorization token"), "{}", e.message());
        assert_eq!(classify(503, "GET", "").kind(), ErrorKind::Unavailable);
        assert!(classify(418, "GET", "").message().contains("unexpected status 418"));
    }
}
