//! What one `Store` holds: the WASI context built from the plugin's grants
//! (and nothing else), the wasi:http hooks that check `allow-hosts`, vx's
//! `host` interface, the memory limiter and the per-call clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{Resource, ResourceTable};
use wasmtime::{ResourceLimiter, format_err};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use super::bindings::reporter::vx::plugin::{host, types};
use super::bindings::{Level, StreamKind, WitError};
use super::grants::{Grants, Limits};
use super::process::ExecContext;
use super::stdio::CapturedOutput;

/// Guest stdout and stderr are kept up to this much per call and shown
/// prefixed with the plugin's name.
const STDIO_CAPACITY: usize = 64 << 10;
/// Log records kept per call; the rest are counted and dropped.
const MAX_LOG_RECORDS: usize = 200;
/// A log message is cut to this many bytes.
const MAX_LOG_LEN: usize = 4000;
/// Tables may grow to this many elements (function references, resources).
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// The identity and settings of a loaded plugin that every store shares.
#[derive(Debug)]
pub struct PluginContext {
    pub name: String,
    pub grants: Grants,
    pub limits: Limits,
    /// `[plugins.NAME].config` as JSON.
    pub config_json: String,
}

/// A task's output, from an executor (vx shows it and keeps it for the cache).
pub struct OutputSink {
    pub write: SinkFn,
}

/// Where an output sink's bytes go.
pub(crate) type SinkFn = Box<dyn FnMut(StreamKind, &[u8]) + Send>;

impl std::fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSink")
    }
}

/// Bytes vx streams into a plugin (a cache entry being uploaded).
#[derive(Debug)]
pub struct BlobReader {
    pub data: Arc<Vec<u8>>,
    pub pos: usize,
}

/// Bytes a plugin streams into vx (a cache entry being downloaded), at most
/// `limits.output` of them (checked by the `write` import).
#[derive(Debug)]
pub struct BlobWriter {
    pub data: Vec<u8>,
}

/// One log record from a plugin.
#[derive(Debug, Clone)]
pub struct LogRecord {
    pub level: Level,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

/// Why a call was interrupted, as set by the epoch callback or the limiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The task the call runs was stopped (its timeout, Ctrl-C).
    Cancelled,
    Cpu(Duration),
    WallClock(Duration),
    Memory {
        limit: u64,
        wanted: u64,
    },
    /// It handed vx more than `limits.output` bytes (task output, a blob).
    Output {
        limit: u64,
        what: &'static str,
    },
}

pub struct State {
    pub plugin: Arc<PluginContext>,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    hooks: HttpHooks,
    pub table: ResourceTable,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub logs: VecDeque<LogRecord>,
    pub dropped_logs: usize,
    /// Panic text sent by the SDK's panic hook just before its trap.
    pub panic: Option<String>,
    pub stop: Option<Stop>,
    /// When the current call started, and the thread CPU time then.
    pub call_started: Instant,
    pub cpu_at_start: Duration,
    /// The call's wall-clock limit: `call-timeout`, or none for `execute`,
    /// whose task has its own timeout, kept by vx.
    pub wall_limit: Option<Duration>,
    /// The task being executed, for the `process` import.
    pub exec: Option<ExecContext>,
    /// Linear memory of the instance, summed over its memories: it only
    /// grows, and outlives a call on a pooled instance.
    pub memory: u64,
    /// Bytes this call wrote to vx's output sinks and blob writers.
    pub handed: u64,
    /// Child processes whose handles the plugin still holds (`process`).
    pub children: usize,
    /// The workspace a command plugin reads (`workspace` import).
    pub workspace: Option<Arc<super::command::WorkspaceModel>>,
}

/// The clocks of a plugin without `allow-clocks`: the wall clock reads
/// the Unix epoch and the monotonic clock 0, always. They tell the plugin
/// nothing about the host, the date or how long anything took (no timer
/// to measure a side channel with); sleeps and timeouts still wait in real
/// time, since wasmtime-wasi keeps those on the host's clock.
#[derive(Debug, Clone, Copy)]
struct StoppedClock;

impl wasmtime_wasi::HostWallClock for StoppedClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl wasmtime_wasi::HostMonotonicClock for StoppedClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}

impl State {
    /// A store's data with exactly the grants of `plugin`: preopened dirs,
    /// named env vars, stdin closed, no network, stopped clocks unless
    /// granted, nothing inherited. Output is captured and shown prefixed
    /// with the plugin's name, except a command plugin's (`own_stdio`),
    /// which writes to vx's stdout and stderr as a verb of vx would.
    pub(super) fn new(plugin: Arc<PluginContext>, own_stdio: bool) -> Result<State, String> {
        let stdout = CapturedOutput::new(STDIO_CAPACITY);
        let stderr = CapturedOutput::new(STDIO_CAPACITY);
        let mut builder = WasiCtxBuilder::new();
        if own_stdio {
            builder.inherit_stdout().inherit_stderr();
        } else {
            builder.stdout(stdout.clone()).stderr(stderr.clone());
        }
        // No sockets: wasmtime-wasi denies them by default, and vx says so
        // here so that a change of default upstream cannot open them. A
        // plugin reaches the network only through wasi:http and `allow-hosts`.
        builder.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
        if !plugin.grants.clocks {
            builder.wall_clock(StoppedClock).monotonic_clock(StoppedClock);
        }
        for name in &plugin.grants.env {
            if let Ok(value) = std::env::var(name) {
                builder.env(name, value);
            }
        }
        for dir in &plugin.grants.dirs {
            let perms = if dir.rw { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            builder
                .preopened_dir(&dir.host, &dir.guest, perms)
                .map_err(|e| format!("could not open `{}` from [plugins.{}].dirs: {e}", dir.guest, plugin.name))?;
        }
        let hooks = HttpHooks { plugin: plugin.clone() };
        let plugin_limits = plugin.limits;
        Ok(State {
            plugin,
            wasi: builder.build(),
            http: WasiHttpCtx::new(),
            hooks,
            table: ResourceTable::new(),
            stdout,
            stderr,
            logs: VecDeque::new(),
            dropped_logs: 0,
            panic: None,
            stop: None,
            call_started: Instant::now(),
            cpu_at_start: Duration::ZERO,
            wall_limit: Some(plugin_limits.call_timeout),
            exec: None,
            memory: 0,
            handed: 0,
            children: 0,
            workspace: None,
        })
    }

    /// Starts a call: its clocks, and nothing left from a previous call on
    /// the same store (a pooled instance's).
    pub fn begin_call(&mut self) {
        self.logs.clear();
        self.dropped_logs = 0;
        self.panic = None;
        self.stop = None;
        self.exec = None;
        self.handed = 0;
        self.wall_limit = Some(self.plugin.limits.call_timeout);
        self.call_started = Instant::now();
        self.cpu_at_start = thread_cpu();
    }

    /// Whether the instance may serve another call after this one: nothing
    /// stopped it, it holds no child process (whose group must die with
    /// the call), and it uses at most half of its memory limit (memory
    /// never shrinks, so a large instance would leave the next call little
    /// room).
    pub fn reusable(&self) -> bool {
        self.stop.is_none()
            && self.panic.is_none()
            && self.children == 0
            && self.memory <= self.plugin.limits.memory / 2
    }
}

/// The thread's CPU time so far: a call's CPU budget counts the thread
/// that makes it.
pub(crate) fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).map(Duration::from).unwrap_or_default()
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").field("plugin", &self.plugin.name).finish_non_exhaustive()
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { hooks: &mut self.hooks, table: &mut self.table, ctx: &mut self.http }
    }
}

/// The wasi:http hooks: every outgoing request is checked against
/// `allow-hosts`, and a denied one never leaves the process.
struct HttpHooks {
    plugin: Arc<PluginContext>,
}

type SendResult = wasmtime_wasi_http::Result<(
    http::Response<wasmtime_wasi_http::WasiBody>,
    Box<dyn Future<Output = wasmtime_wasi_http::Result<(), wasmtime_wasi_http::Error>> + Send>,
)>;

impl WasiHttpHooks for HttpHooks {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        drop(fut);
        let uri = request.uri();
        let scheme = uri.scheme_str().unwrap_or("https").to_string();
        let host = uri.host().unwrap_or_default().to_string();
        let port = uri.port_u16().unwrap_or(if scheme == "https" { 443 } else { 80 });
        let allowed = self.plugin.grants.hosts.iter().any(|p| p.allows(&scheme, &host, port));
        if !allowed {
            tracing::info!(
                "plugin `{}`: request to {scheme}://{host}:{port} denied; add \"{scheme}://{host}:{port}\" to [plugins.{}].allow-hosts in vx.toml to allow it",
                self.plugin.name,
                self.plugin.name
            );
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        let timeout = self.plugin.limits.call_timeout;
        let mut options = options.unwrap_or_default();
        options.connect_timeout = Some(options.connect_timeout.map_or(timeout, |t| t.min(timeout)));
        options.first_byte_timeout = Some(options.first_byte_timeout.map_or(timeout, |t| t.min(timeout)));
        options.between_bytes_timeout = Some(options.between_bytes_timeout.map_or(timeout, |t| t.min(timeout)));
        Box::new(async move {
            use http_body_util::BodyExt;
            let (response, io) = wasmtime_wasi_http::default_send_request(request, Some(options)).await?;
            Ok((
                response.map(BodyExt::boxed_unsync),
                Box::new(io)
                    as Box<dyn Future<Output = wasmtime_wasi_http::Result<(), wasmtime_wasi_http::Error>> + Send>,
            ))
        })
    }
}

impl ResourceLimiter for State {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let limit = self.plugin.limits.memory;
        if desired as u64 > limit {
            self.stop = Some(Stop::Memory { limit, wanted: desired as u64 });
            return Err(format_err!("memory limit of {} exceeded", mib(limit)));
        }
        self.memory += desired.saturating_sub(current) as u64;
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// `256 MiB`, for messages.
pub(crate) fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) { format!("{} MiB", bytes >> 20) } else { format!("{bytes} bytes") }
}

impl types::Host for State {}

impl host::Host for State {
    fn log(&mut self, level: Level, message: String, fields: Vec<(String, String)>) {
        let mut message = message;
        truncate(&mut message, MAX_LOG_LEN);
        if fields.iter().any(|(k, v)| k == "panic" && v == "true") {
            self.panic = Some(message.clone());
            return;
        }
        if self.logs.len() >= MAX_LOG_RECORDS {
            self.dropped_logs += 1;
            return;
        }
        let fields = fields
            .into_iter()
            .take(32)
            .map(|(mut k, mut v)| {
                truncate(&mut k, 200);
                truncate(&mut v, 1000);
                (k, v)
            })
            .collect();
        self.logs.push_back(LogRecord { level, message, fields });
    }

    fn config(&mut self) -> String {
        self.plugin.config_json.clone()
    }
}

impl State {
    /// Counts `len` more bytes handed to vx; `false` (and the call marked
    /// to stop) once the call is past `limits.output`.
    fn hand(&mut self, len: usize, what: &'static str) -> bool {
        let limit = self.plugin.limits.output;
        if self.stop.is_some() {
            return false;
        }
        self.handed = self.handed.saturating_add(len as u64);
        if self.handed > limit {
            self.stop = Some(Stop::Output { limit, what });
            return false;
        }
        true
    }
}

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
}

fn stale(what: &str) -> WitError {
    WitError::Failed(format!("invalid {what} handle"))
}

impl host::HostOutputSink for State {
    /// Past `limits.output` the bytes are dropped and the call is stopped
    /// at the next epoch tick: `write` has no error to return, and a plugin
    /// streaming endlessly must not grow vx's copy of the task's log.
    fn write(&mut self, sink: Resource<OutputSink>, kind: StreamKind, data: Vec<u8>) {
        if !self.hand(data.len(), "task output") {
            return;
        }
        if let Ok(sink) = self.table.get_mut(&sink) {
            (sink.write)(kind, &data);
        }
    }

    fn drop(&mut self, sink: Resource<OutputSink>) -> wasmtime::Result<()> {
        self.table.delete(sink)?;
        Ok(())
    }
}

impl host::HostBlobReader for State {
    fn read(&mut self, reader: Resource<BlobReader>, max_len: u32) -> Result<Option<Vec<u8>>, WitError> {
        let reader = self.table.get_mut(&reader).map_err(|_| stale("blob-reader"))?;
        if reader.pos >= reader.data.len() {
            return Ok(None);
        }
        let len = (max_len as usize).clamp(1, 4 << 20).min(reader.data.len() - reader.pos);
        let chunk = reader.data[reader.pos..reader.pos + len].to_vec();
        reader.pos += len;
        Ok(Some(chunk))
    }

    fn drop(&mut self, reader: Resource<BlobReader>) -> wasmtime::Result<()> {
        self.table.delete(reader)?;
        Ok(())
    }
}

impl host::HostBlobWriter for State {
    fn write(&mut self, writer: Resource<BlobWriter>, data: Vec<u8>) -> Result<(), WitError> {
        if !self.hand(data.len(), "cache entry") {
            let limit = self.plugin.limits.output;
            return Err(WitError::Failed(format!("the entry is larger than the {} vx accepts", mib(limit))));
        }
        let writer = self.table.get_mut(&writer).map_err(|_| stale("blob-writer"))?;
        writer.data.extend_from_slice(&data);
        Ok(())
    }

    fn drop(&mut self, writer: Resource<BlobWriter>) -> wasmtime::Result<()> {
        self.table.delete(writer)?;
        Ok(())
    }
}
