//! The `otel` subscriber: each `vx run` an OpenTelemetry trace, sent over
//! OTLP/HTTP with the JSON encoding to `POST {endpoint}/v1/traces`.
//!
//! The root span is the run (`vx run build`: its command line, vx's
//! version, exit code, task counts); each task is a child span named
//! `project#task` (status, cache status, key, exit code, attempts,
//! duration, CPU time and peak memory when vx measured them); each timed
//! step of a task (hash, cache lookup, restore, every attempt, archive) a
//! span under its task. Times are vx's, so the plugin needs no clock.
//!
//! Spans are buffered and sent when the run ends, or in batches of
//! [`BATCH_SPANS`] on a long run. A receiver that is down or answers with
//! an error is an error value: vx prints it once and the run is unchanged.

mod otlp;
mod trace;

use std::time::Duration;

use serde::Deserialize;
use vx_plugin_sdk::http::{Method, Request, Url};
use vx_plugin_sdk::subscriber::{Event, EventKind, Subscriber};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_subscriber};

use crate::otlp::Origin;
use crate::trace::RunTrace;

/// Finished spans buffered before an export in the middle of a run.
const BATCH_SPANS: usize = 1000;
/// Per-request timeout when the config sets none (vx caps it at the
/// plugin's `call-timeout`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of a refusing receiver's answer an error quotes.
const MAX_ANSWER: usize = 300;

/// The `[plugins.NAME].config` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Config {
    /// The OTLP/HTTP receiver, e.g. `http://127.0.0.1:4318`; `/v1/traces`
    /// is appended unless it is there already. Its origin must be in
    /// `allow-hosts`.
    pub endpoint: String,
    /// The resource's `service.name`; `vx` when unset.
    pub service_name: Option<String>,
    /// Per-request timeout in seconds.
    pub timeout_secs: Option<u64>,
}

/// The `/v1/traces` URL of `endpoint`, checked.
fn traces_url(endpoint: &str) -> Result<String, Error> {
    let trimmed = endpoint.trim_end_matches('/');
    let url = if trimmed.ends_with("/v1/traces") { trimmed.to_string() } else { format!("{trimmed}/v1/traces") };
    Url::parse(&url).map_err(|e| e.context("config.endpoint"))?;
    Ok(url)
}

#[derive(Default)]
struct Otel {
    run: Option<(RunTrace, Origin)>,
}

impl Describe for Otel {
    fn info() -> PluginInfo {
        PluginInfo::new("otel", env!("CARGO_PKG_VERSION")).request("allow-hosts=http://127.0.0.1:4318")
    }
}

impl Subscriber for Otel {
    type Config = Config;

    fn on_events(&mut self, config: &Config, events: Vec<Event>) -> Result<(), Error> {
        let url = traces_url(&config.endpoint)?;
        for event in events {
            if let EventKind::RunStarted(run) = &event.kind {
                let origin = Origin {
                    service_name: config.service_name.clone().unwrap_or_else(|| "vx".to_string()),
                    vx_version: run.vx_version.clone(),
                    plugin_version: env!("CARGO_PKG_VERSION").to_string(),
                };
                self.run = Some((RunTrace::new(trace_id(), Box::new(span_id)), origin));
            }
            let Some((trace, _)) = &mut self.run else {
                return Err(Error::failed("events arrived before the run started"));
            };
            trace.on(event);
        }
        let Some((trace, origin)) = &mut self.run else { return Ok(()) };
        if trace.finished || trace.done.len() >= BATCH_SPANS {
            let spans = std::mem::take(&mut trace.done);
            let body = otlp::export_request(origin, &trace.trace_id, &spans);
            let timeout = config.timeout_secs.map_or(DEFAULT_TIMEOUT, Duration::from_secs);
            send(&url, body, timeout)?;
        }
        Ok(())
    }
}

fn send(url: &str, body: String, timeout: Duration) -> Result<(), Error> {
    let len = body.len() as u64;
    let mut response = Request::new(Method::Post, url)?
        .header("content-type", "application/json")
        .timeout(timeout)
        .send_body(&mut body.as_bytes(), Some(len))?;
    let status = response.status();
    if (200..300).contains(&status) {
        return Ok(());
    }
    let answer = response.read_to_end(64 * 1024).unwrap_or_default();
    let answer: String = String::from_utf8_lossy(&answer).chars().take(MAX_ANSWER).collect();
    let message = format!("{}: the receiver answered {status}: {}", response.request(), answer.trim());
    Err(if status >= 500 || status == 429 { Error::unavailable(message) } else { Error::failed(message) })
}

fn random<const N: usize>() -> [u8; N] {
    let bytes = vx_plugin_sdk::bindings::imports::wasi::random::random::get_random_bytes(N as u64);
    let mut out = [0u8; N];
    for (slot, byte) in out.iter_mut().zip(bytes) {
        *slot = byte;
    }
    // An all-zero id is invalid in OTLP.
    if out.iter().all(|b| *b == 0) {
        out[N - 1] = 1;
    }
    out
}

fn trace_id() -> [u8; 16] {
    random()
}

fn span_id() -> [u8; 8] {
    random()
}

export_subscriber!(Otel);

#[cfg(test)]
mod tests {
    use super::traces_url;

    #[test]
    fn the_traces_path_is_appended_once() {
        assert_eq!(traces_url("http://127.0.0.1:4318").unwrap(), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces_url("http://h:4318/").unwrap(), "http://h:4318/v1/traces");
        assert_eq!(traces_url("https://h/otlp/v1/traces").unwrap(), "https://h/otlp/v1/traces");
        assert!(traces_url("h:4318").is_err());
    }
}
