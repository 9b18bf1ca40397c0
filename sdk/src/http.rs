//! A small blocking HTTP client over `wasi:http/outgoing-handler`, for
//! cache backends, executors and subscribers. Every request goes through
//! vx, which checks it against the plugin's `allow-hosts` grant; a denied request
//! comes back as [`Error::denied`], a remote that cannot be reached as
//! [`Error::unavailable`].
//!
//! Bodies stream both ways in bounded chunks, so an artifact never has to
//! fit in the plugin's memory:
//!
//! ```ignore
//! use vx_plugin_sdk::http::{Method, Request};
//! let mut response = Request::new(Method::Get, "https://cache.acme.dev/v8/artifacts/abc")?
//!     .header("authorization", "Bearer t0ken")
//!     .send()?;
//! if response.status() == 200 {
//!     std::io::copy(&mut response, &mut std::io::sink())?;
//! }
//! ```

use std::io::{self, Read};
use std::time::Duration;

use crate::Error;
use crate::bindings::imports::vx::plugin::types::Error as WitError;
use crate::bindings::imports::wasi::http::outgoing_handler;
use crate::bindings::imports::wasi::http::types::{
    ErrorCode, Fields, IncomingBody, IncomingResponse, Method as WasiMethod, OutgoingBody, OutgoingRequest,
    RequestOptions, Scheme,
};
use crate::bindings::imports::wasi::io::streams::{InputStream, StreamError};

/// Bytes moved per host call when streaming a body.
const CHUNK: usize = 64 * 1024;

/// The request methods a cache or executor needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Put,
    Post,
    Delete,
}

impl Method {
    fn to_wasi(self) -> WasiMethod {
        match self {
            Method::Get => WasiMethod::Get,
            Method::Head => WasiMethod::Head,
            Method::Put => WasiMethod::Put,
            Method::Post => WasiMethod::Post,
            Method::Delete => WasiMethod::Delete,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// An `http://` or `https://` URL taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub https: bool,
    /// `host` or `host:port`.
    pub authority: String,
    /// Starts with `/`; includes the query.
    pub path_and_query: String,
}

impl Url {
    /// Parses `scheme://authority/path?query`; anything else is an
    /// `invalid-config` error, since URLs come from a plugin's config.
    pub fn parse(text: &str) -> Result<Url, Error> {
        let bad = |why: &str| Error::invalid_config(format!("`{text}` is not a usable URL: {why}"));
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("it needs http:// or https://"))?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "http" => false,
            "https" => true,
            _ => return Err(bad("the scheme must be http or https")),
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.contains('@') || authority.contains(char::is_whitespace) {
            return Err(bad("it needs a host (and no user info)"));
        }
        let path = path.split('#').next().unwrap_or_default();
        let path_and_query = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
        Ok(Url { https, authority: authority.to_string(), path_and_query })
    }

    /// `scheme://authority`, for messages.
    pub fn origin(&self) -> String {
        format!("{}://{}", if self.https { "https" } else { "http" }, self.authority)
    }
}

/// One request, built up and then sent with [`Request::send`] or
/// [`Request::send_body`].
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    url: Url,
    headers: Vec<(String, String)>,
    timeout: Option<Duration>,
}

impl Request {
    pub fn new(method: Method, url: &str) -> Result<Request, Error> {
        Ok(Request { method, url: Url::parse(url)?, headers: Vec::new(), timeout: None })
    }

    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Connect, first-byte and between-bytes timeout. vx caps each at the
    /// plugin's `call-timeout` whatever is asked here.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// `GET /path` on the request's host, for messages.
    pub fn describe(&self) -> String {
        format!("{} {}{}", self.method.as_str(), self.url.origin(), path_only(&self.url.path_and_query))
    }

    /// Sends the request with no body.
    pub fn send(self) -> Result<Response, Error> {
        self.send_inner(None)
    }

    /// Sends the request with `body`, streamed in chunks. With `len`, a
    /// `content-length` header is set (some servers refuse chunked uploads).
    pub fn send_body(self, body: &mut dyn Read, len: Option<u64>) -> Result<Response, Error> {
        self.send_inner(Some((body, len)))
    }

    fn send_inner(mut self, body: Option<(&mut dyn Read, Option<u64>)>) -> Result<Response, Error> {
        let what = self.describe();
        if let Some((_, Some(len))) = &body {
            self.headers.push(("content-length".into(), len.to_string()));
        }
        let fields = Fields::new();
        for (name, value) in &self.headers {
            fields
                .append(&name.to_ascii_lowercase(), value.as_bytes())
                .map_err(|e| Error::failed(format!("{what}: header `{name}` is not allowed: {e:?}")))?;
        }
        let request = OutgoingRequest::new(fields);
        let set = |ok: Result<(), ()>, part: &str| ok.map_err(|()| Error::failed(format!("{what}: invalid {part}")));
        set(request.set_method(&self.method.to_wasi()), "method")?;
        set(request.set_scheme(Some(if self.url.https { &Scheme::Https } else { &Scheme::Http })), "scheme")?;
        set(request.set_authority(Some(&self.url.authority)), "host")?;
        set(request.set_path_with_query(Some(&self.url.path_and_query)), "path")?;
        let outgoing = request.body().map_err(|()| Error::failed(format!("{what}: no request body")))?;
        let options = self.timeout.map(|t| {
            let options = RequestOptions::new();
            let ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
            let _ = options.set_connect_timeout(Some(ns));
            let _ = options.set_first_byte_timeout(Some(ns));
            let _ = options.set_between_bytes_timeout(Some(ns));
            options
        });
        // Sent before the body is written: the host reads the body as it
        // arrives, so a large one streams instead of filling a buffer.
        let future = outgoing_handler::handle(request, options).map_err(|e| transport_error(&what, &self.url, e))?;
        // A server may answer (say 401) before it read the body and close
        // it; then the answer, not the broken upload, says what went wrong.
        // So does a denial: vx refuses the request before a byte is sent.
        let written = match body {
            Some((reader, _)) => write_body(&outgoing, reader).map_err(|e| e.context(&what)),
            None => Ok(()),
        };
        let finished = OutgoingBody::finish(outgoing, None).map_err(|e| transport_error(&what, &self.url, e));
        let response = loop {
            match future.get() {
                Some(Ok(Ok(response))) => break response,
                Some(Ok(Err(ErrorCode::HttpRequestDenied))) => {
                    return Err(transport_error(&what, &self.url, ErrorCode::HttpRequestDenied));
                }
                Some(Ok(Err(e))) => return Err(written.err().unwrap_or_else(|| transport_error(&what, &self.url, e))),
                Some(Err(())) => return Err(Error::failed(format!("{what}: the response was taken twice"))),
                None => future.subscribe().block(),
            }
        };
        let response = Response::new(response, what)?;
        if (200..300).contains(&response.status()) {
            written?;
            finished?;
        }
        Ok(response)
    }
}

fn path_only(path_and_query: &str) -> &str {
    path_and_query.split('?').next().unwrap_or_default()
}

fn write_body(body: &OutgoingBody, reader: &mut dyn Read) -> Result<(), Error> {
    let stream = body.write().map_err(|()| Error::failed("the request body is not writable"))?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        let mut offset = 0;
        while offset < n {
            let permit = stream.check_write().map_err(|e| stream_error("sending the body", e))?;
            if permit == 0 {
                stream.subscribe().block();
                continue;
            }
            let len = (n - offset).min(usize::try_from(permit).unwrap_or(usize::MAX));
            stream.write(&buf[offset..offset + len]).map_err(|e| stream_error("sending the body", e))?;
            offset += len;
        }
    }
    // Once the last byte is out, the host may already have closed the
    // stream (the request is complete by its content-length): not an error.
    match stream.blocking_flush() {
        Ok(()) | Err(StreamError::Closed) => Ok(()),
        Err(e) => Err(stream_error("sending the body", e)),
    }
}

fn stream_error(doing: &str, e: StreamError) -> Error {
    match e {
        StreamError::Closed => Error::unavailable(format!("{doing}: the connection closed")),
        StreamError::LastOperationFailed(e) => Error::unavailable(format!("{doing}: {}", e.to_debug_string())),
    }
}

/// Denied requests name the grant; transport failures are `unavailable`.
fn transport_error(what: &str, url: &Url, e: ErrorCode) -> Error {
    match e {
        ErrorCode::HttpRequestDenied => Error::denied(format!(
            "{what}: {} is not in this plugin's `allow-hosts` grant; add \"{}\" to it in vx.toml",
            url.origin(),
            url.origin()
        )),
        ErrorCode::InternalError(Some(m)) => Error::failed(format!("{what}: {m}")),
        ErrorCode::ConnectionRefused => Error::unavailable(format!("{what}: connection refused")),
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout | ErrorCode::ConnectionWriteTimeout => {
            Error::unavailable(format!("{what}: timed out"))
        }
        other => Error::unavailable(format!("{what}: {other:?}")),
    }
}

/// A response: status, headers, and the body as `std::io::Read`.
///
/// The fields drop in order: the stream before the body, the body before
/// the response, as wasi:http requires of child resources.
#[derive(Debug)]
pub struct Response {
    stream: Option<InputStream>,
    body: Option<IncomingBody>,
    /// Held only so it is dropped after the body, its child.
    _response: IncomingResponse,
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    what: String,
}

impl Response {
    fn new(response: IncomingResponse, what: String) -> Result<Response, Error> {
        let status = response.status();
        let headers = response.headers().entries();
        let body = response.consume().map_err(|()| Error::failed(format!("{what}: no response body")))?;
        let stream = body.stream().map_err(|()| Error::failed(format!("{what}: no response body stream")))?;
        Ok(Response { stream: Some(stream), body: Some(body), _response: response, status, headers, what })
    }

    pub fn status(&self) -> u16 {
        self.status
    }

    /// The first value of header `name` (case-insensitive), if it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).and_then(|(_, v)| std::str::from_utf8(v).ok())
    }

    /// What was sent, e.g. `GET https://cache.acme.dev/v8/artifacts/abc`.
    pub fn request(&self) -> &str {
        &self.what
    }

    /// The whole body, refusing more than `max` bytes.
    pub fn read_to_end(&mut self, max: usize) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        (&mut *self).take(max as u64 + 1).read_to_end(&mut out)?;
        if out.len() > max {
            return Err(Error::failed(format!("{}: the response is larger than {max} bytes", self.what)));
        }
        Ok(out)
    }

    /// Reads and drops what is left of the body, so the connection ends cleanly.
    pub fn discard(mut self) {
        let _ = io::copy(&mut self, &mut io::sink());
    }
}

impl Read for Response {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let Some(stream) = &self.stream else { return Ok(0) };
        if out.is_empty() {
            return Ok(0);
        }
        let want = out.len().min(CHUNK) as u64;
        loop {
            match stream.blocking_read(want) {
                // A zero-length read is not the end; the next one blocks.
                Ok(chunk) if chunk.is_empty() => continue,
                Ok(chunk) => {
                    out[..chunk.len()].copy_from_slice(&chunk);
                    return Ok(chunk.len());
                }
                Err(StreamError::Closed) => {
                    self.stream = None;
                    if let Some(body) = self.body.take() {
                        drop(IncomingBody::finish(body));
                    }
                    return Ok(0);
                }
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(io::Error::other(WitError::Unavailable(format!(
                        "{}: {}",
                        self.what,
                        e.to_debug_string()
                    ))));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse() {
        let u = Url::parse("http://127.0.0.1:3000/v8/artifacts/ab?teamId=t").unwrap();
        assert_eq!(
            u,
            Url {
                https: false,
                authority: "127.0.0.1:3000".into(),
                path_and_query: "/v8/artifacts/ab?teamId=t".into()
            }
        );
        assert_eq!(u.origin(), "http://127.0.0.1:3000");
        let u = Url::parse("https://cache.acme.dev").unwrap();
        assert_eq!(u.path_and_query, "/");
        let u = Url::parse("HTTPS://x.dev?q=1#frag").unwrap();
        assert_eq!((u.https, u.path_and_query.as_str()), (true, "/?q=1"));
        for bad in ["cache.acme.dev", "ftp://x", "http://", "http://user@x/", "http://a b/"] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }
}
