//! Spans as an OTLP `ExportTraceServiceRequest` in the OTLP/JSON encoding
//! (opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): field names
//! in lowerCamelCase, trace and span ids as lowercase hex (not base64),
//! 64-bit integers (`startTimeUnixNano`, `intValue`) as decimal strings,
//! enums (`kind`, `status.code`) as numbers.

use serde_json::{Value as Json, json};

use crate::trace::{Span, SpanStatus, Value};

/// `SPAN_KIND_INTERNAL`: a step inside vx, neither a server nor a client.
const KIND_INTERNAL: u32 = 1;
/// `STATUS_CODE_ERROR`.
const STATUS_ERROR: u32 = 2;

/// Who produced the spans: the resource and scope of every export.
#[derive(Debug, Clone)]
pub struct Origin {
    pub service_name: String,
    pub vx_version: String,
    pub plugin_version: String,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn any_value(value: &Value) -> Json {
    match value {
        Value::Str(s) => json!({ "stringValue": s }),
        Value::Int(i) => json!({ "intValue": i.to_string() }),
        Value::Bool(b) => json!({ "boolValue": b }),
    }
}

fn attributes(list: &[(String, Value)]) -> Json {
    Json::Array(list.iter().map(|(key, value)| json!({ "key": key, "value": any_value(value) })).collect())
}

fn span(trace_id: &[u8; 16], span: &Span) -> Json {
    let mut out = json!({
        "traceId": hex(trace_id),
        "spanId": hex(&span.span_id),
        "name": span.name,
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": span.start.to_string(),
        "endTimeUnixNano": span.end.to_string(),
        "attributes": attributes(&span.attributes),
        "events": span.events.iter().map(|e| json!({
            "timeUnixNano": e.at.to_string(),
            "name": e.name,
        })).collect::<Vec<_>>(),
    });
    if let Some(parent) = &span.parent {
        out["parentSpanId"] = json!(hex(parent));
    }
    if let SpanStatus::Error(message) = &span.status {
        out["status"] = json!({ "code": STATUS_ERROR, "message": message });
    }
    out
}

/// The request body for `POST /v1/traces`.
pub fn export_request(origin: &Origin, trace_id: &[u8; 16], spans: &[Span]) -> String {
    let resource = [
        ("service.name".to_string(), Value::Str(origin.service_name.clone())),
        ("service.version".to_string(), Value::Str(origin.vx_version.clone())),
    ];
    json!({
        "resourceSpans": [{
            "resource": { "attributes": attributes(&resource) },
            "scopeSpans": [{
                "scope": { "name": "vx-otel", "version": origin.plugin_version },
                "spans": spans.iter().map(|s| span(trace_id, s)).collect::<Vec<_>>(),
            }],
        }],
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::SpanEvent;

    #[test]
    fn ids_are_hex_and_64_bit_numbers_are_strings() {
        let origin = Origin { service_name: "vx".into(), vx_version: "0.1.0".into(), plugin_version: "0.1.0".into() };
        let spans = [Span {
            span_id: [0xab; 8],
            parent: Some([1; 8]),
            name: "app#build".into(),
            start: 1_700_000_000_000_000_000,
            end: 1_700_000_000_500_000_000,
            attributes: vec![("vx.task.exit_code".into(), Value::Int(3))],
            events: vec![SpanEvent { at: 5, name: "note".into() }],
            status: SpanStatus::Error("exit code 3".into()),
        }];
        let body: Json = serde_json::from_str(&export_request(&origin, &[0x0f; 16], &spans)).unwrap();
        let span = &body["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(span["traceId"], "0f".repeat(16));
        assert_eq!(span["spanId"], "ab".repeat(8));
        assert_eq!(span["parentSpanId"], "01".repeat(8));
        assert_eq!(span["startTimeUnixNano"], "1700000000000000000");
        assert_eq!(span["attributes"][0]["value"]["intValue"], "3");
        assert_eq!(span["status"]["code"], 2);
        assert_eq!(span["events"][0]["timeUnixNano"], "5");
    }
}
