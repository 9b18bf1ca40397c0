//! The OCI distribution API, the few calls a plugin needs: GET a manifest,
//! GET a blob (checked against its digest as it arrives), HEAD a blob,
//! upload a blob (POST then a monolithic PUT), PUT a manifest. A `401`
//! is answered once per repository with the credentials of `auth`:
//! `Basic` directly, `Bearer` through the realm's token service.

use std::io::Read;

use sha2::{Digest, Sha256};
use ureq::Agent;
use ureq::http::{Method, Request, Response};

use super::auth::{Challenge, Credentials};
use super::error::OciError;
use super::reference::Reference;
use super::tls;

/// Media types a manifest request accepts: OCI's, and Docker's so that a
/// container image is recognised and refused by name rather than a 404.
const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json";

/// Manifests are small JSON documents; a larger answer is not one.
pub(crate) const MAX_MANIFEST: u64 = 4 << 20;

/// A client for one repository of one registry.
#[derive(Debug)]
pub(crate) struct Registry {
    agent: Agent,
    base: String,
    registry: String,
    repository: String,
    credentials: Credentials,
    /// `pull` or `pull,push`: the token scope asked for.
    actions: &'static str,
    /// The `Authorization` header once a challenge was answered.
    authorization: Option<String>,
}

/// A fetched manifest: its bytes (whose sha256 is its digest) and the
/// `Content-Type` and `Docker-Content-Digest` the registry gave it.
#[derive(Debug)]
pub(crate) struct FetchedManifest {
    pub bytes: Vec<u8>,
    pub content_type: Option<String>,
    pub digest: Option<String>,
}

/// `sha256:HEX` of `bytes`.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

impl Registry {
    /// A client for `reference`'s repository; `push` asks for push rights.
    pub(crate) fn new(reference: &Reference, push: bool, plain_http: bool) -> Result<Registry, OciError> {
        let scheme = if plain_http { "http" } else { "https" };
        let credentials = Credentials::for_registry(&reference.registry);
        // A token from the environment is sent from the first request.
        let authorization = match &credentials {
            Credentials::Token(t) => Some(format!("Bearer {t}")),
            _ => None,
        };
        Ok(Registry {
            agent: tls::agent()?,
            base: format!("{scheme}://{}/v2/{}", reference.registry, reference.repository),
            registry: reference.registry.clone(),
            repository: reference.repository.clone(),
            credentials,
            actions: if push { "pull,push" } else { "pull" },
            authorization,
        })
    }

    /// GET the manifest `target` (a tag or a digest).
    pub(crate) fn manifest(&mut self, target: &str) -> Result<FetchedManifest, OciError> {
        let what = format!("manifest {}:{target}", self.repository);
        let url = format!("{}/manifests/{target}", self.base);
        let mut response = self.send(Method::GET, &url, &[("accept", ACCEPT)], None, &what)?;
        self.expect(&mut response, &[200], &what)?;
        let content_type =
            header(&response, "content-type").map(|t| t.split(';').next().unwrap_or(t).trim().to_string());
        let digest = header(&response, "docker-content-digest").map(str::to_string);
        let bytes = read_limited(&mut response, MAX_MANIFEST, &what, &self.registry)?;
        Ok(FetchedManifest { bytes, content_type, digest })
    }

    /// GET blob `digest` of `size` bytes; refused unless the bytes hash to
    /// `digest` (a tampered or truncated blob never leaves this function).
    pub(crate) fn blob(&mut self, digest: &str, size: u64, what: &str) -> Result<Vec<u8>, OciError> {
        let url = format!("{}/blobs/{digest}", self.base);
        let mut response = self.send(Method::GET, &url, &[], None, what)?;
        self.expect(&mut response, &[200], what)?;
        let bytes = match read_limited(&mut response, size, what, &self.registry) {
            Err(OciError::TooLarge { .. }) => {
                let got = format!("more than the manifest's {size} bytes");
                return Err(OciError::Digest { what: what.to_string(), expected: digest.to_string(), got });
            }
            other => other?,
        };
        let got = sha256_digest(&bytes);
        if got != digest {
            return Err(OciError::Digest { what: what.to_string(), expected: digest.to_string(), got });
        }
        Ok(bytes)
    }

    /// Uploads `bytes` as a blob unless the registry has it; returns its digest.
    pub(crate) fn push_blob(&mut self, bytes: &[u8], what: &str) -> Result<String, OciError> {
        let digest = sha256_digest(bytes);
        let url = format!("{}/blobs/{digest}", self.base);
        let mut head = self.send(Method::HEAD, &url, &[], None, what)?;
        if head.status() == 200 {
            return Ok(digest);
        }
        self.expect(&mut head, &[404], what)?;
        let start = format!("{}/blobs/uploads/", self.base);
        let mut started = self.send(Method::POST, &start, &[("content-length", "0")], Some(&[]), what)?;
        self.expect(&mut started, &[202], what)?;
        let location = header(&started, "location").unwrap_or_default().to_string();
        if location.is_empty() {
            return Err(self.status_error(202, what, " without a Location for the upload".to_string()));
        }
        let location = self.absolute(&location);
        let sep = if location.contains('?') { '&' } else { '?' };
        let put = format!("{location}{sep}digest={digest}");
        let mut done =
            self.send(Method::PUT, &put, &[("content-type", "application/octet-stream")], Some(bytes), what)?;
        self.expect(&mut done, &[201], what)?;
        Ok(digest)
    }

    /// PUTs a manifest under `target` (a tag, or its digest).
    pub(crate) fn put_manifest(&mut self, target: &str, media_type: &str, bytes: &[u8]) -> Result<(), OciError> {
        let what = format!("pushing manifest {}:{target}", self.repository);
        let url = format!("{}/manifests/{target}", self.base);
        let mut response = self.send(Method::PUT, &url, &[("content-type", media_type)], Some(bytes), &what)?;
        self.expect(&mut response, &[201], &what)
    }

    /// Sends a request, answering one `401` challenge and sending it again.
    fn send(
        &mut self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        what: &str,
    ) -> Result<Response<ureq::Body>, OciError> {
        let response = self.send_once(method.clone(), url, headers, body)?;
        if response.status() != 401 || !self.answer(&response, what)? {
            return Ok(response);
        }
        self.send_once(method, url, headers, body)
    }

    fn send_once(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Response<ureq::Body>, OciError> {
        let mut builder = Request::builder().method(method).uri(url);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        if let Some(auth) = &self.authorization {
            builder = builder.header("authorization", auth);
        }
        let connect = |e: ureq::Error| OciError::Connect { registry: self.registry.clone(), source: Box::new(e) };
        match body {
            Some(b) => builder.body(b).map_err(|e| connect(e.into())).and_then(|r| self.agent.run(r).map_err(connect)),
            None => builder.body(()).map_err(|e| connect(e.into())).and_then(|r| self.agent.run(r).map_err(connect)),
        }
    }

    /// Answers a `401`'s challenge; `false` when there is nothing new to
    /// answer with (anonymous, or the answer was already refused).
    fn answer(&mut self, response: &Response<ureq::Body>, what: &str) -> Result<bool, OciError> {
        let denied = || OciError::Denied { registry: self.registry.clone(), status: 401, what: what.to_string() };
        let Some(challenge) = header(response, "www-authenticate").and_then(Challenge::parse) else {
            return Err(denied());
        };
        let fresh = match challenge.scheme.as_str() {
            "basic" => self.credentials.basic_header(),
            "bearer" => self.token(&challenge, what)?,
            _ => None,
        };
        match fresh {
            Some(h) if self.authorization.as_ref() != Some(&h) => {
                self.authorization = Some(h);
                Ok(true)
            }
            _ => Err(denied()),
        }
    }

    /// Gets a bearer token from the challenge's realm for this repository.
    fn token(&self, challenge: &Challenge, what: &str) -> Result<Option<String>, OciError> {
        let Some(realm) = challenge.param("realm") else {
            return Ok(None);
        };
        let scope = format!("repository:{}:{}", self.repository, self.actions);
        let mut request = self.agent.get(realm).query("scope", &scope);
        if let Some(service) = challenge.param("service") {
            request = request.query("service", service);
        }
        if let Some(basic) = self.credentials.basic_header() {
            request = request.header("authorization", &basic);
        }
        let mut response =
            request.call().map_err(|e| OciError::Connect { registry: realm.to_string(), source: Box::new(e) })?;
        if response.status() != 200 {
            return Err(OciError::Denied {
                registry: self.registry.clone(),
                status: response.status().as_u16(),
                what: what.to_string(),
            });
        }
        let body = read_limited(&mut response, 1 << 20, "a token", &self.registry)?;
        let doc: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let token = doc.get("token").or_else(|| doc.get("access_token")).and_then(|t| t.as_str());
        Ok(token.map(|t| format!("Bearer {t}")))
    }

    /// Refuses a status other than `ok`, naming what was asked.
    fn expect(&self, response: &mut Response<ureq::Body>, ok: &[u16], what: &str) -> Result<(), OciError> {
        let status = response.status().as_u16();
        if ok.contains(&status) {
            return Ok(());
        }
        let registry = self.registry.clone();
        Err(match status {
            401 | 403 => OciError::Denied { registry, status, what: what.to_string() },
            404 => OciError::NotFound { registry, what: what.to_string() },
            _ => {
                // The distribution spec's error body: {"errors":[{"code","message"}]}.
                let body = read_limited(response, 64 << 10, what, &self.registry).unwrap_or_default();
                let doc: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let detail = doc["errors"][0]["message"].as_str().map(|m| format!(": {m}")).unwrap_or_default();
                return Err(self.status_error(status, what, detail));
            }
        })
    }

    fn status_error(&self, status: u16, what: &str, detail: String) -> OciError {
        OciError::Status { registry: self.registry.clone(), status, what: what.to_string(), detail }
    }

    /// An upload `Location` may be relative to the registry.
    fn absolute(&self, location: &str) -> String {
        if location.starts_with("http://") || location.starts_with("https://") {
            return location.to_string();
        }
        let origin = self.base.split("/v2/").next().unwrap_or(&self.base);
        format!("{origin}{location}")
    }
}

fn header<'a>(response: &'a Response<ureq::Body>, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Reads a body of at most `limit` bytes; a longer one is refused.
fn read_limited(
    response: &mut Response<ureq::Body>,
    limit: u64,
    what: &str,
    registry: &str,
) -> Result<Vec<u8>, OciError> {
    let mut bytes = Vec::new();
    let read = response.body_mut().with_config().limit(limit).reader().read_to_end(&mut bytes);
    let over = |e: &std::io::Error| {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ureq::Error>())
            .is_some_and(|u| matches!(u, ureq::Error::BodyExceedsLimit(_)))
    };
    match read {
        Err(e) if over(&e) => return Err(OciError::TooLarge { what: what.to_string(), limit }),
        Err(e) => {
            return Err(OciError::Connect { registry: registry.to_string(), source: Box::new(ureq::Error::Io(e)) });
        }
        Ok(_) => {}
    }
    if bytes.len() as u64 > limit {
        return Err(OciError::TooLarge { what: what.to_string(), limit });
    }
    Ok(bytes)
}
