//! The connection to a REAPI server: endpoint and TLS, the headers every
//! call carries (a bearer token from a named variable, fixed headers),
//! per-call deadlines, the bound on every reply, and the server's
//! capabilities, read once.
//!
//! All I/O runs on one small tokio runtime of this module's own, never
//! dropped: the cache tier calls in from the run loop's blocking threads
//! ([`Reapi::block`]), the remote executor awaits from async code, and the
//! channel's background tasks live on this runtime whoever calls.
//! [`stop_calls`] (a signal stopping the run) ends every blocked call at
//! once, so a stalled server cannot hold SIGTERM up.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;

use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use super::digest::DigestFn;
use super::re;
use crate::config::RemoteSettings;

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// gRPC's default message limit; a batch never exceeds it, whatever the
/// server advertises.
const GRPC_MESSAGE_LIMIT: usize = 4 << 20;
/// The largest message vx decodes from a server: an `ActionResult`, a
/// batch reply, one ByteStream chunk. Far above what an honest reply
/// needs (batches stay under 4 MiB, servers stream 1–4 MiB chunks, an
/// action result with 100,000 outputs is ~15 MiB), and small enough that
/// a hostile reply cannot make vx allocate without bound: anything larger
/// is refused by the decoder (docs/remote.md, "Bounds").
pub(super) const MAX_MESSAGE: usize = 64 << 20;
/// The time a streamed transfer is granted beyond `[remote] timeout` per
/// MiB it moves: a 1 GiB blob gets the timeout plus 17 minutes, a stalled
/// or slow-loris stream of a small blob no more than the timeout.
const STREAM_TIME_PER_MIB: Duration = Duration::from_secs(1);

/// Why a call to the server failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// Not reachable, timed out or broke off: worth a warning, not a retry storm.
    #[error("{}", crate::error::one_line(.0))]
    Unavailable(String),
    /// The server answered no: permissions, a disabled service, a limit.
    #[error("{}", crate::error::one_line(.0))]
    Refused(String),
    /// The server sent something vx cannot use (a wrong digest, a bad
    /// message, a blob it was not asked for or left out): it breaks the
    /// protocol, so nothing more it says is trusted in this run.
    #[error("{}", crate::error::one_line(.0))]
    Invalid(String),
    /// One blob cannot be had as asked: the CAS says it lacks it (evicted,
    /// never uploaded), or it came back the right size with other content
    /// (a corrupted disk). The entry naming it is a miss; the server's
    /// other answers stay usable.
    #[error("{0}")]
    Blob(String),
}

/// A path from the server that would leave the directory it is written to.
impl From<crate::paths::PathError> for RemoteError {
    fn from(e: crate::paths::PathError) -> RemoteError {
        RemoteError::Invalid(e.to_string())
    }
}

impl From<RemoteError> for crate::Error {
    fn from(e: RemoteError) -> crate::Error {
        let error = crate::Error::internal(e.to_string());
        match e {
            RemoteError::Unavailable(_) => error.with_hint("is the REAPI server up and reachable from here?"),
            RemoteError::Refused(_) | RemoteError::Invalid(_) | RemoteError::Blob(_) => error,
        }
    }
}

impl RemoteError {
    /// The same error with `where` in front (the endpoint, for warnings).
    pub fn at(self, place: &str) -> RemoteError {
        let put = |m: String| if m.contains(place) { m } else { format!("{place}: {m}") };
        match self {
            RemoteError::Unavailable(m) => RemoteError::Unavailable(put(m)),
            RemoteError::Refused(m) => RemoteError::Refused(put(m)),
            RemoteError::Invalid(m) => RemoteError::Invalid(put(m)),
            RemoteError::Blob(m) => RemoteError::Blob(put(m)),
        }
    }

    /// The same error with `; tail` after its message.
    pub fn with_tail(self, tail: &str) -> RemoteError {
        let put = |m: String| format!("{m}; {tail}");
        match self {
            RemoteError::Unavailable(m) => RemoteError::Unavailable(put(m)),
            RemoteError::Refused(m) => RemoteError::Refused(put(m)),
            RemoteError::Invalid(m) => RemoteError::Invalid(put(m)),
            RemoteError::Blob(m) => RemoteError::Blob(put(m)),
        }
    }

    /// Classifies a gRPC status from a call named `what`.
    pub fn from_status(what: &str, status: &tonic::Status) -> RemoteError {
        use tonic::Code;
        let msg = format!("{what}: {} ({:?})", status.message().trim(), status.code());
        match status.code() {
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown | Code::Aborted => {
                RemoteError::Unavailable(msg)
            }
            Code::InvalidArgument | Code::DataLoss | Code::Internal => RemoteError::Invalid(msg),
            _ => RemoteError::Refused(msg),
        }
    }
}

/// What the server said it can do.
#[derive(Debug, Clone)]
pub(crate) struct Capabilities {
    pub digest: DigestFn,
    /// The largest batch request, in bytes (capped at gRPC's 4 MiB).
    pub max_batch: usize,
    pub ac_update: bool,
    pub exec: bool,
}

/// A connected REAPI client; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Reapi {
    pub(super) channel: Channel,
    pub instance: String,
    headers: Arc<Vec<(AsciiMetadataKey, AsciiMetadataValue)>>,
    timeout: Duration,
    pub caps: Capabilities,
    pub endpoint: String,
    /// `[remote] platform`: the properties of remotely executed actions.
    pub platform: std::collections::BTreeMap<String, String>,
}

/// The runtime every REAPI call runs on (two threads: calls are I/O).
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("vx-remote")
            .enable_all()
            .build()
            .expect("the remote I/O runtime starts")
    })
}

impl Reapi {
    /// The connection, for clients of other services on the same server
    /// (`vx worker`'s Remote Workers API); cheap to clone.
    pub(crate) fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// Runs `fut` on the REAPI runtime and waits for it. For synchronous
    /// callers only (blocking threads, the CLI), never from async code.
    /// Once [`stop_calls`] was called, the call is dropped and this answers
    /// UNAVAILABLE at once; so does a call that died without answering.
    pub(crate) fn block<T, F>(fut: F) -> Result<T, RemoteError>
    where
        F: Future<Output = Result<T, RemoteError>> + Send + 'static,
        T: Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime().spawn(async move {
            let answer = tokio::select! {
                answer = fut => answer,
                () = stopped() => Err(RemoteError::Unavailable(STOPPED.into())),
            };
            let _ = tx.send(answer);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(RemoteError::Unavailable(
                "the REAPI call ended without an answer (its task on the I/O runtime died)".into(),
            ))
        })
    }

    /// Connects to `[remote]` and reads the server's capabilities.
    pub(crate) async fn connect(settings: &RemoteSettings) -> Result<Reapi, RemoteError> {
        let endpoint = settings.endpoint.clone();
        let Some((uri, tls)) = crate::config::grpc_address(&endpoint) else {
            return Err(RemoteError::Refused(format!("[remote] endpoint `{endpoint}` is not a gRPC address")));
        };
        let mut ep = Endpoint::from_shared(uri)
            .map_err(|e| RemoteError::Refused(format!("[remote] endpoint `{endpoint}`: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true);
        if tls {
            let mut config = ClientTlsConfig::new().with_native_roots();
            if let Some(path) = &settings.tls_ca {
                let pem = std::fs::read(path).map_err(|e| {
                    RemoteError::Refused(format!(
                        "[remote] tls-ca: cannot read {}: {e}; point it at a PEM file of CA certificates",
                        path.display()
                    ))
                })?;
                config = config.ca_certificate(Certificate::from_pem(pem));
            }
            ep = ep.tls_config(config).map_err(|e| RemoteError::Refused(format!("TLS for {endpoint}: {e}")))?;
        } else if settings.tls_ca.is_some() {
            return Err(RemoteError::Refused(format!(
                "[remote] tls-ca is set but endpoint `{endpoint}` is plain gRPC; write it as grpcs://"
            )));
        }
        let channel = ep.connect().await.map_err(|e| {
            RemoteError::Unavailable(format!("cannot reach the REAPI server at {endpoint}: {}", source_chain(&e)))
        })?;
        let mut reapi = Reapi {
            channel,
            instance: settings.instance_name.clone(),
            headers: Arc::new(headers(settings)?),
            timeout: settings.timeout,
            caps: Capabilities {
                digest: DigestFn::Sha256,
                max_batch: GRPC_MESSAGE_LIMIT,
                ac_update: false,
                exec: false,
            },
            endpoint,
            platform: settings.platform.clone(),
        };
        reapi.caps = reapi.capabilities().await?;
        Ok(reapi)
    }

    async fn capabilities(&self) -> Result<Capabilities, RemoteError> {
        let mut client = re::capabilities_client::CapabilitiesClient::new(self.channel.clone());
        let caps = self
            .unary(
                client.get_capabilities(self.req(re::GetCapabilitiesRequest { instance_name: self.instance.clone() })),
            )
            .await
            .map_err(|s| RemoteError::from_status(&format!("GetCapabilities at {}", self.endpoint), &s))?;
        let cache = caps.cache_capabilities.unwrap_or_default();
        let digest = DigestFn::choose(&cache.digest_functions).ok_or_else(|| {
            RemoteError::Refused(format!(
                "the REAPI server at {} offers neither SHA-256 nor BLAKE3 digests (it lists {:?})",
                self.endpoint, cache.digest_functions
            ))
        })?;
        let advertised = usize::try_from(cache.max_batch_total_size_bytes).unwrap_or(0);
        let max_batch = if advertised == 0 { GRPC_MESSAGE_LIMIT } else { advertised.min(GRPC_MESSAGE_LIMIT) };
        let exec = caps.execution_capabilities.is_some_and(|e| e.exec_enabled);
        let ac_update = cache.action_cache_update_capabilities.is_some_and(|u| u.update_enabled);
        Ok(Capabilities { digest, max_batch, ac_update, exec })
    }

    /// A request with the deadline and headers every call carries.
    pub(crate) fn req<T>(&self, msg: T) -> tonic::Request<T> {
        let mut req = tonic::Request::new(msg);
        req.set_timeout(self.timeout);
        for (k, v) in self.headers.iter() {
            req.metadata_mut().insert(k.clone(), v.clone());
        }
        req
    }

    /// Awaits a unary call with the deadline enforced here as well: the
    /// `grpc-timeout` header of [`req`](Self::req) is only the server's to
    /// honour, and a server that never answers must not hang vx. (Not on
    /// the channel: a streamed upload or execution may rightly outlast it.)
    pub(crate) async fn unary<T>(
        &self,
        call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, tonic::Status> {
        bounded(self.timeout, call).await
    }

    /// A request without a deadline (a streamed execution lasts as long as its task).
    pub(crate) fn req_unbounded<T>(&self, msg: T) -> tonic::Request<T> {
        let mut req = self.req(msg);
        req.metadata_mut().remove("grpc-timeout");
        req
    }

    /// The deadline of one streamed transfer of `size` bytes: `[remote]
    /// timeout` plus [`STREAM_TIME_PER_MIB`] for each MiB.
    pub(super) fn stream_deadline(&self, size: u64) -> Duration {
        let mib = u32::try_from(size >> 20).unwrap_or(u32::MAX);
        self.timeout.saturating_add(STREAM_TIME_PER_MIB.saturating_mul(mib))
    }
}

/// What a call stopped by [`stop_calls`] answers.
const STOPPED: &str = "the REAPI call was stopped: vx is stopping";

fn stop_flag() -> &'static (AtomicBool, Notify) {
    static STOP: OnceLock<(AtomicBool, Notify)> = OnceLock::new();
    STOP.get_or_init(|| (AtomicBool::new(false), Notify::new()))
}

/// Ends every REAPI call [`Reapi::block`] waits on, now and for the rest
/// of the process: the run was interrupted, and a lookup stalled on a slow
/// server must not keep it from stopping.
pub(crate) fn stop_calls() {
    let (flag, notify) = stop_flag();
    flag.store(true, Ordering::SeqCst);
    notify.notify_waiters();
}

/// Resolves once [`stop_calls`] was called.
async fn stopped() {
    let (flag, notify) = stop_flag();
    loop {
        let woken = notify.notified();
        if flag.load(Ordering::SeqCst) {
            return;
        }
        woken.await;
    }
}

/// `call`'s message, or DEADLINE_EXCEEDED once `deadline` (plus a little
/// for the server's own answer to arrive) has passed.
pub(crate) async fn bounded<T>(
    deadline: Duration,
    call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, tonic::Status> {
    const SLACK: Duration = Duration::from_secs(1);
    match tokio::time::timeout(deadline + SLACK, call).await {
        Ok(answer) => answer.map(tonic::Response::into_inner),
        Err(_) => Err(tonic::Status::deadline_exceeded(format!("no answer within {deadline:?}"))),
    }
}

/// The token from its variable, and the fixed headers, as gRPC metadata.
fn headers(settings: &RemoteSettings) -> Result<Vec<(AsciiMetadataKey, AsciiMetadataValue)>, RemoteError> {
    let bad = |what: String| RemoteError::Refused(format!("[remote] {what}"));
    let mut out = Vec::new();
    for (name, value) in &settings.headers {
        let key = AsciiMetadataKey::from_bytes(name.to_ascii_lowercase().as_bytes())
            .map_err(|_| bad(format!("header name `{name}` is not a valid gRPC metadata key")))?;
        let value = AsciiMetadataValue::try_from(value.as_str())
            .map_err(|_| bad(format!("header `{name}` has a value that is not printable ASCII")))?;
        out.push((key, value));
    }
    if let Some(var) = &settings.token_env {
        let token = std::env::var(var).map_err(|_| {
            bad(format!("token-env names `{var}`, which is not set; export the token in it or remove token-env"))
        })?;
        let value = AsciiMetadataValue::try_from(format!("Bearer {}", token.trim()))
            .map_err(|_| bad(format!("the token in `{var}` is not printable ASCII")))?;
        out.push((AsciiMetadataKey::from_static("authorization"), value));
    }
    Ok(out)
}

/// An error with its causes, on one line (transport errors nest the useful part).
pub(crate) fn source_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = s.source();
    }
    out
}
