//! A minimal OTLP/HTTP trace receiver for the subscriber tests, on
//! 127.0.0.1 and a free port. No OpenTelemetry Collector or Jaeger build
//! is packaged for Debian, npm or PyPI, so the receiver is here: it speaks
//! just enough HTTP/1.1 for `POST /v1/traces` and decodes each body with
//! the OpenTelemetry project's own generated types (`opentelemetry-proto`,
//! its OTLP/JSON mapping: hex ids, 64-bit integers as strings), so a body
//! that does not follow the OTLP schema is refused with 400 and recorded
//! as an error the test sees.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
pub(crate) use opentelemetry_proto::tonic::common::v1::any_value::Value;
pub(crate) use opentelemetry_proto::tonic::trace::v1::Span;

/// What the receiver got: decoded exports, and why any request was refused.
#[derive(Debug, Default)]
struct Received {
    exports: Vec<ExportTraceServiceRequest>,
    errors: Vec<String>,
}

/// A running receiver; its thread ends with the test process.
#[derive(Debug)]
pub(crate) struct OtlpReceiver {
    port: u16,
    received: Arc<Mutex<Received>>,
}

impl OtlpReceiver {
    pub(crate) fn start() -> OtlpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port on 127.0.0.1");
        let port = listener.local_addr().expect("a bound address").port();
        let received = Arc::new(Mutex::new(Received::default()));
        let shared = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let outcome = handle(&stream);
                let mut got = shared.lock().unwrap_or_else(PoisonError::into_inner);
                match outcome {
                    Ok(export) => got.exports.push(export),
                    Err(why) => got.errors.push(why),
                }
            }
        });
        OtlpReceiver { port, received }
    }

    /// `http://127.0.0.1:PORT`, for `endpoint` and `allow-hosts`.
    pub(crate) fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span received so far, in arrival order.
    pub(crate) fn spans(&self) -> Vec<Span> {
        let got = self.received.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(got.errors.is_empty(), "the receiver refused requests: {:?}", got.errors);
        got.exports
            .iter()
            .flat_map(|e| &e.resource_spans)
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| s.spans.iter().cloned())
            .collect()
    }

    /// The `service.name` of every export's resources.
    pub(crate) fn service_names(&self) -> Vec<String> {
        let got = self.received.lock().unwrap_or_else(PoisonError::into_inner);
        got.exports
            .iter()
            .flat_map(|e| &e.resource_spans)
            .filter_map(|r| r.resource.as_ref())
            .filter_map(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
            .filter_map(|kv| match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::StringValue(s)) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }
}

/// The value of attribute `key` of `span`.
pub(crate) fn attribute<'a>(span: &'a Span, key: &str) -> Option<&'a Value> {
    span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.as_ref()).and_then(|v| v.value.as_ref())
}

/// Reads one request, answers it, and returns the decoded export.
fn handle(stream: &TcpStream) -> Result<ExportTraceServiceRequest, String> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).map_err(|e| format!("read the request line: {e}"))?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| format!("read a header: {e}"))?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let body = match header("content-length") {
        Some(len) => {
            let len: usize = len.parse().map_err(|e| format!("content-length {len:?}: {e}"))?;
            let mut body = vec![0; len];
            reader.read_exact(&mut body).map_err(|e| format!("read the body: {e}"))?;
            body
        }
        None if header("transfer-encoding") == Some("chunked") => read_chunked(&mut reader)?,
        None => return Err(answer(stream, 411, "a body needs content-length or chunked encoding")),
    };
    if !request_line.starts_with("POST /v1/traces ") {
        return Err(answer(stream, 404, &format!("unexpected request {:?}", request_line.trim_end())));
    }
    if header("content-type") != Some("application/json") {
        return Err(answer(stream, 415, &format!("content-type {:?}, not application/json", header("content-type"))));
    }
    match serde_json::from_slice::<ExportTraceServiceRequest>(&body) {
        Ok(export) => {
            answer(stream, 200, "{}");
            Ok(export)
        }
        Err(e) => Err(answer(stream, 400, &format!("not an OTLP/JSON ExportTraceServiceRequest: {e}"))),
    }
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).map_err(|e| format!("read a chunk size: {e}"))?;
        let size = usize::from_str_radix(size.trim(), 16).map_err(|e| format!("chunk size {size:?}: {e}"))?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).map_err(|e| format!("read a chunk: {e}"))?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// Writes the answer and returns `text`, for the error list.
fn answer(mut stream: &TcpStream, status: u16, text: &str) -> String {
    let reply = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.write_all(reply.as_bytes());
    text.to_string()
}
