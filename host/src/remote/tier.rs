//! The REAPI remote cache tier (`[cache] remote = "reapi"`): lookups,
//! verified downloads, write-once uploads and the count of refusals.
//!
//! A read is trusted only after every check passes: the signature (when
//! `VX_REMOTE_SIGNING_KEY` is set), every blob's digest, the header's key,
//! and every output against the header's BLAKE3. Anything less is a miss
//! with a warning. A write never replaces an existing result, and uploads
//! every blob before the result that names them.
//!
//! A server that fails a call (unreachable, a deadline, an error status)
//! or breaks the protocol (a blob left out, a stream longer than its
//! digest) is given up on at once: one warning naming the endpoint, and
//! every later lookup of the run is a miss and every upload skipped
//! without asking it again. An entry that does not verify, or whose blobs
//! the server honestly says it lacks, is a miss for that entry alone.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::client::{Reapi, RemoteError};
use super::entry::{from_result, from_result_without_outputs, key_action, needed, to_result};
use super::re;
use super::sign;
use crate::cache::{Backend, BackendError, CacheKey};
use crate::config::RemoteSettings;

/// The remote tier over a REAPI server, connected on first use.
#[derive(Debug)]
pub(crate) struct ReapiTier {
    settings: RemoteSettings,
    client: OnceLock<Result<Reapi, RemoteError>>,
    signing_key: Option<Vec<u8>>,
    uploads: AtomicUsize,
    refused: AtomicUsize,
    first_refusal: Mutex<Option<String>>,
    bytes_down: AtomicU64,
    bytes_up: AtomicU64,
    hits: AtomicUsize,
    /// Entries that did not verify (each a miss), and the first of them.
    untrusted: AtomicUsize,
    first_untrusted: Mutex<Option<(String, String)>>,
    /// Set by the first failed call; nothing is asked of the server after it.
    given_up: AtomicBool,
    /// Keys whose entries were fetched without their outputs (`--download`).
    deferred: Mutex<std::collections::HashSet<String>>,
}

/// Ends the one warning a failing server gets.
const GIVEN_UP: &str = "not using the remote cache for the rest of this run";

impl ReapiTier {
    pub(crate) fn new(settings: RemoteSettings) -> ReapiTier {
        ReapiTier {
            settings,
            client: OnceLock::new(),
            signing_key: sign::key_from_env(),
            uploads: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
            first_refusal: Mutex::new(None),
            bytes_down: AtomicU64::new(0),
            bytes_up: AtomicU64::new(0),
            hits: AtomicUsize::new(0),
            untrusted: AtomicUsize::new(0),
            first_untrusted: Mutex::new(None),
            given_up: AtomicBool::new(false),
            deferred: Mutex::default(),
        }
    }

    fn given_up(&self) -> bool {
        self.given_up.load(Ordering::SeqCst)
    }

    /// `outcome`, or on the first failure of the run that failure (the one
    /// warning); a failure after it, from a call already in flight, is
    /// `quiet` instead.
    fn give_up_on_failure<T>(&self, outcome: Result<T, RemoteError>, quiet: T) -> Result<T, RemoteError> {
        match outcome {
            Ok(v) => Ok(v),
            Err(_) if self.given_up.swap(true, Ordering::SeqCst) => Ok(quiet),
            Err(e) => Err(e.with_tail(GIVEN_UP)),
        }
    }

    fn client(&self) -> Result<Reapi, RemoteError> {
        self.client
            .get_or_init(|| {
                let settings = self.settings.clone();
                Reapi::block(async move { Reapi::connect(&settings).await })
            })
            .clone()
    }

    /// The entry of `key` (without its outputs' bytes unless `outputs`):
    /// `Ok(None)` on a miss or an entry that does not verify (with a
    /// warning), `Err` when the server failed.
    fn download_entry(&self, key: &str, outputs: bool) -> Result<Option<Vec<u8>>, RemoteError> {
        if self.given_up() {
            return Ok(None);
        }
        let found = self.give_up_on_failure(self.download_entry_now(key, outputs), None)?;
        Ok(found)
    }

    fn download_entry_now(&self, key: &str, outputs: bool) -> Result<Option<Vec<u8>>, RemoteError> {
        let client = self.client()?;
        let lookup = CacheKey(key.to_string());
        let signing_key = self.signing_key.clone();
        let endpoint = client.endpoint.clone();
        let found = Reapi::block(async move { fetch(&client, &lookup, signing_key.as_deref(), outputs).await })
            .map_err(|e| e.at(&endpoint))?;
        match found {
            Fetched::Hit(bytes, moved) => {
                self.bytes_down.fetch_add(moved, Ordering::Relaxed);
                // A hit whose outputs were left behind counted when it was
                // looked up; fetching them later is not another hit.
                if !outputs || !self.deferred.lock().expect("deferred lock poisoned").remove(key) {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                }
                if !outputs {
                    self.deferred.lock().expect("deferred lock poisoned").insert(key.to_string());
                }
                Ok(Some(bytes))
            }
            Fetched::Miss => Ok(None),
            Fetched::Untrusted(why) => {
                // A rotten entry condemns itself, not the server: the
                // others stay usable. One warning for the run, at its end,
                // counts them (see `finish`).
                self.untrusted.fetch_add(1, Ordering::Relaxed);
                let short = key.get(..16).unwrap_or(key);
                let first = (short.to_string(), crate::error::one_line(&why));
                self.first_untrusted.lock().expect("untrusted lock poisoned").get_or_insert(first);
                Ok(None)
            }
        }
    }

    /// Uploads an entry unless the server already has one for the key.
    /// A refusal is counted (reported by [`Backend::finish`]), not an error.
    fn upload_entry(&self, key: &str, bytes: &[u8]) -> Result<(), RemoteError> {
        if self.given_up() {
            return Ok(());
        }
        self.give_up_on_failure(self.upload_entry_now(key, bytes), ())
    }

    fn upload_entry_now(&self, key: &str, bytes: &[u8]) -> Result<(), RemoteError> {
        let client = self.client()?;
        self.uploads.fetch_add(1, Ordering::Relaxed);
        if !client.caps.ac_update {
            self.refusal(format!(
                "the server at {} does not accept action cache writes (its capabilities say update_enabled = false)",
                client.endpoint
            ));
            return Ok(());
        }
        let key = CacheKey(key.to_string());
        let (action, mut blobs) = key_action(client.caps.digest, &key);
        let (result, entry_blobs) = to_result(client.caps.digest, &action, &key, bytes, self.signing_key.as_deref())
            .map_err(RemoteError::Invalid)?;
        blobs.extend(entry_blobs);
        let endpoint = client.endpoint.clone();
        let outcome =
            Reapi::block(async move { store(&client, action, result, blobs).await }).map_err(|e| e.at(&endpoint));
        match outcome {
            Ok(sent) => {
                self.bytes_up.fetch_add(sent, Ordering::Relaxed);
                Ok(())
            }
            Err(RemoteError::Refused(why)) => {
                self.refusal(why);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn refusal(&self, why: String) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        // The reason may quote the server's digests and paths.
        self.first_refusal.lock().expect("refusal lock poisoned").get_or_insert(crate::error::one_line(&why));
    }

    /// Which keys the server holds a result for.
    fn find_entries(&self, keys: &[String]) -> Result<Vec<bool>, RemoteError> {
        if keys.is_empty() || self.given_up() {
            return Ok(vec![false; keys.len()]);
        }
        let none = vec![false; keys.len()];
        self.give_up_on_failure(self.find_entries_now(keys), none)
    }

    fn find_entries_now(&self, keys: &[String]) -> Result<Vec<bool>, RemoteError> {
        let client = self.client()?;
        let endpoint = client.endpoint.clone();
        let keys: Vec<CacheKey> = keys.iter().map(|k| CacheKey(k.clone())).collect();
        Reapi::block(async move {
            let lookups = keys.iter().map(|key| {
                let (action, _) = key_action(client.caps.digest, key);
                let client = client.clone();
                async move { client.action_result(&action).await.map(|r| r.is_some()) }
            });
            futures_util::future::join_all(lookups).await.into_iter().collect()
        })
        .map_err(|e| e.at(&endpoint))
    }
}

/// The REAPI server as the cache's remote backend.
impl Backend for ReapiTier {
    fn name(&self) -> &str {
        crate::config::REAPI_REMOTE
    }

    fn exists(&self, keys: &[String]) -> Result<Vec<bool>, BackendError> {
        self.find_entries(keys).map_err(BackendError::new)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.download_entry(key, true).map_err(BackendError::new)
    }

    fn partial(&self) -> bool {
        true
    }

    fn get_without_outputs(&self, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.download_entry(key, false).map_err(BackendError::new)
    }

    fn put(&self, key: &str, bytes: Arc<Vec<u8>>) -> Result<(), BackendError> {
        self.upload_entry(key, &bytes).map_err(BackendError::new)
    }

    /// Connects and reads the server's capabilities.
    fn check(&self) -> Result<Vec<String>, BackendError> {
        let caps = self.client().map_err(BackendError::new)?.caps;
        Ok(vec![
            format!("{} digests", caps.digest.name()),
            if caps.ac_update { "action cache writable" } else { "action cache read-only" }.to_string(),
            if caps.exec { "remote execution" } else { "no remote execution" }.to_string(),
            format!("batches up to {}", crate::units::format_bytes(caps.max_batch as u64)),
        ])
    }

    /// Reports refused uploads (never silent) and, with `VX_REMOTE_STATS`,
    /// the traffic of the run.
    fn finish(&self) {
        let first = self.first_untrusted.lock().expect("untrusted lock poisoned").clone();
        if let Some((key, why)) = first {
            let endpoint = &self.settings.endpoint;
            match self.untrusted.load(Ordering::Relaxed) {
                1 => tracing::warn!(
                    "the REAPI cache entry {key} at {endpoint} did not verify and was not used: {why}; its task ran"
                ),
                n => tracing::warn!(
                    "{n} REAPI cache entries at {endpoint} did not verify and were not used (the first, {key}: {why}); their tasks ran"
                ),
            }
        }
        let refused = self.refused.load(Ordering::Relaxed);
        if refused > 0 {
            let uploads = self.uploads.load(Ordering::Relaxed);
            let why = self.first_refusal.lock().expect("refusal lock poisoned").clone().unwrap_or_default();
            tracing::warn!("the REAPI cache refused {refused} of {uploads} uploads: {why}");
        }
        if std::env::var_os("VX_REMOTE_STATS").is_some() {
            tracing::info!(
                "remote cache: {} hits, {} bytes down; {} uploads, {} bytes up",
                self.hits.load(Ordering::Relaxed),
                self.bytes_down.load(Ordering::Relaxed),
                self.uploads.load(Ordering::Relaxed),
                self.bytes_up.load(Ordering::Relaxed)
            );
        }
    }
}

enum Fetched {
    /// The encoded entry and the bytes downloaded for it.
    Hit(Vec<u8>, u64),
    Miss,
    Untrusted(String),
}

/// Looks `key` up and downloads its entry, its outputs' bytes only with
/// `outputs`; every check that the downloaded bytes allow is made.
async fn fetch(
    client: &Reapi,
    key: &CacheKey,
    signing_key: Option<&[u8]>,
    outputs: bool,
) -> Result<Fetched, RemoteError> {
    let (action, _) = key_action(client.caps.digest, key);
    let Some(result) = client.action_result(&action).await? else { return Ok(Fetched::Miss) };
    if let Some(k) = signing_key
        && let Err(why) = sign::verify(k, &action, &result)
    {
        return Ok(Fetched::Untrusted(why.to_string()));
    }
    let digests = match needed(&result, outputs) {
        Ok(d) => d,
        Err(why) => return Ok(Fetched::Untrusted(why)),
    };
    let blobs = match client.download(&digests).await {
        Ok(b) => b,
        // A result whose blobs are gone (evicted, never uploaded) is a miss,
        // and so is one whose blob came back corrupted: the server answered
        // as asked, so its other entries may well be sound.
        Err(RemoteError::Blob(why)) => return Ok(Fetched::Untrusted(why)),
        Err(e) => return Err(e),
    };
    let moved = blobs.values().map(|b| b.len() as u64).sum();
    let rebuilt =
        if outputs { from_result(key, &result, &blobs) } else { from_result_without_outputs(key, &result, &blobs) };
    Ok(match rebuilt {
        Ok(bytes) => Fetched::Hit(bytes, moved),
        Err(why) => Fetched::Untrusted(why),
    })
}

/// Write-once: blobs first, then the result, unless a result exists.
async fn store(
    client: &Reapi,
    action: re::Digest,
    result: re::ActionResult,
    blobs: Vec<(re::Digest, Vec<u8>)>,
) -> Result<u64, RemoteError> {
    if client.action_result(&action).await?.is_some() {
        return Ok(0);
    }
    let sent = client.upload(blobs).await?;
    client.update_action_result(&action, result).await?;
    Ok(sent)
}

impl Reapi {
    fn ac(&self) -> re::action_cache_client::ActionCacheClient<tonic::transport::Channel> {
        re::action_cache_client::ActionCacheClient::new(self.channel.clone())
            .max_decoding_message_size(super::client::MAX_MESSAGE)
    }

    /// The result stored under `action`, `None` when there is none.
    pub(crate) async fn action_result(&self, action: &re::Digest) -> Result<Option<re::ActionResult>, RemoteError> {
        let req = re::GetActionResultRequest {
            instance_name: self.instance.clone(),
            action_digest: Some(action.clone()),
            inline_stdout: false,
            inline_stderr: false,
            inline_output_files: Vec::new(),
            digest_function: self.caps.digest.proto(),
        };
        match self.unary(self.ac().get_action_result(self.req(req))).await {
            Ok(r) => Ok(Some(r)),
            Err(s) if s.code() == tonic::Code::NotFound => Ok(None),
            Err(s) => Err(RemoteError::from_status("GetActionResult", &s)),
        }
    }

    pub(crate) async fn update_action_result(
        &self,
        action: &re::Digest,
        result: re::ActionResult,
    ) -> Result<(), RemoteError> {
        let req = re::UpdateActionResultRequest {
            instance_name: self.instance.clone(),
            action_digest: Some(action.clone()),
            action_result: Some(result),
            results_cache_policy: None,
            digest_function: self.caps.digest.proto(),
        };
        self.unary(self.ac().update_action_result(self.req(req)))
            .await
            .map_err(|s| RemoteError::from_status("UpdateActionResult", &s))?;
        Ok(())
    }
}
