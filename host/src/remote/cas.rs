//! The content-addressable store: which blobs the server lacks, uploads
//! (small blobs batched up to the server's batch limit, large ones
//! streamed through ByteStream in 1 MiB chunks) and downloads the same
//! way. Every downloaded blob is checked against its digest.
//!
//! What a server sends is bounded: a reply message by
//! [`MAX_MESSAGE`](super::client::MAX_MESSAGE), a streamed blob by its
//! digest's size (the stream is refused the moment it runs past it), and
//! a streamed transfer by [`Reapi::stream_deadline`]. A batch reply that
//! leaves a blob out, or sends one not asked for, breaks the protocol and
//! is an [`RemoteError::Invalid`], never a panic.

use std::collections::{HashMap, HashSet};

use bazel_remote_apis::google::bytestream::{ReadRequest, WriteRequest, byte_stream_client::ByteStreamClient};
use futures_util::StreamExt;

use super::client::{MAX_MESSAGE, Reapi, RemoteError};
use super::digest::show;
use super::re;

/// ByteStream chunk size: well under gRPC's 4 MiB message limit.
const CHUNK: usize = 1 << 20;
/// Room left in a batch for the request's own framing.
const BATCH_SLACK: usize = 64 << 10;
/// Per-blob framing in a batch (digest, status, field tags).
const PER_BLOB: usize = 256;
/// Digests per FindMissingBlobs call.
const FIND_CHUNK: usize = 4096;

impl Reapi {
    fn cas(
        &self,
    ) -> re::content_addressable_storage_client::ContentAddressableStorageClient<tonic::transport::Channel> {
        re::content_addressable_storage_client::ContentAddressableStorageClient::new(self.channel.clone())
            .max_decoding_message_size(MAX_MESSAGE)
    }

    fn fits_batch(&self, size: usize) -> bool {
        size + PER_BLOB + BATCH_SLACK <= self.caps.max_batch
    }

    /// The digests among `digests` that the server does not hold.
    pub(crate) async fn find_missing(&self, digests: &[re::Digest]) -> Result<Vec<re::Digest>, RemoteError> {
        let mut missing = Vec::new();
        for part in digests.chunks(FIND_CHUNK) {
            let req = re::FindMissingBlobsRequest {
                instance_name: self.instance.clone(),
                blob_digests: part.to_vec(),
                digest_function: self.caps.digest.proto(),
            };
            let resp = self
                .unary(self.cas().find_missing_blobs(self.req(req)))
                .await
                .map_err(|s| RemoteError::from_status("FindMissingBlobs", &s))?;
            missing.extend(resp.missing_blob_digests);
        }
        Ok(missing)
    }

    /// Uploads whichever of `blobs` the server lacks. Returns the bytes sent.
    pub(crate) async fn upload(&self, blobs: Vec<(re::Digest, Vec<u8>)>) -> Result<u64, RemoteError> {
        let mut seen = HashSet::new();
        let blobs: Vec<_> = blobs.into_iter().filter(|(d, _)| seen.insert(d.hash.clone())).collect();
        let digests: Vec<re::Digest> = blobs.iter().map(|(d, _)| d.clone()).collect();
        let missing: HashSet<String> = self.find_missing(&digests).await?.into_iter().map(|d| d.hash).collect();
        let mut sent = 0u64;
        let mut batch = Vec::new();
        let mut batch_size = 0;
        for (digest, data) in blobs.into_iter().filter(|(d, _)| missing.contains(&d.hash)) {
            sent += data.len() as u64;
            if !self.fits_batch(data.len()) {
                self.write_stream(&digest, data).await?;
                continue;
            }
            if batch_size + data.len() + PER_BLOB + BATCH_SLACK > self.caps.max_batch {
                self.batch_update(std::mem::take(&mut batch)).await?;
                batch_size = 0;
            }
            batch_size += data.len() + PER_BLOB;
            batch.push(re::batch_update_blobs_request::Request { digest: Some(digest), data, compressor: 0 });
        }
        if !batch.is_empty() {
            self.batch_update(batch).await?;
        }
        Ok(sent)
    }

    async fn batch_update(&self, requests: Vec<re::batch_update_blobs_request::Request>) -> Result<(), RemoteError> {
        let req = re::BatchUpdateBlobsRequest {
            instance_name: self.instance.clone(),
            requests,
            digest_function: self.caps.digest.proto(),
        };
        let resp = self
            .unary(self.cas().batch_update_blobs(self.req(req)))
            .await
            .map_err(|s| RemoteError::from_status("BatchUpdateBlobs", &s))?;
        for r in resp.responses {
            if let Some(status) = r.status.filter(|s| s.code != 0) {
                let digest = r.digest.as_ref().map(show).unwrap_or_default();
                return Err(RemoteError::Refused(format!(
                    "BatchUpdateBlobs refused {digest}: {} (code {})",
                    status.message, status.code
                )));
            }
        }
        Ok(())
    }

    async fn write_stream(&self, digest: &re::Digest, data: Vec<u8>) -> Result<(), RemoteError> {
        let name = self.caps.digest.write_name(&self.instance, &uuid(), digest);
        let total = data.len();
        let data = std::sync::Arc::new(data);
        let chunks = (0..total.div_ceil(CHUNK).max(1)).map(move |i| {
            let start = i * CHUNK;
            let end = (start + CHUNK).min(total);
            WriteRequest {
                resource_name: if i == 0 { name.clone() } else { String::new() },
                write_offset: start as i64,
                finish_write: end == total,
                data: data[start..end].to_vec(),
            }
        });
        let mut client = ByteStreamClient::new(self.channel.clone()).max_decoding_message_size(MAX_MESSAGE);
        let deadline = self.stream_deadline(total as u64);
        let committed = super::client::bounded(deadline, client.write(self.req_unbounded(tokio_stream::iter(chunks))))
            .await
            .map_err(|s| RemoteError::from_status(&format!("ByteStream.Write {}", show(digest)), &s))?
            .committed_size;
        // A server that already held the blob may stop the upload early and
        // report the full size, or -1 with compressed uploads; both are fine.
        if committed != total as i64 && committed != -1 {
            return Err(RemoteError::Invalid(format!(
                "ByteStream.Write {}: the server committed {committed} of {total} bytes",
                show(digest)
            )));
        }
        Ok(())
    }

    /// Downloads `digests`, each checked against its digest, keyed by hash.
    pub(crate) async fn download(&self, digests: &[re::Digest]) -> Result<HashMap<String, Vec<u8>>, RemoteError> {
        let mut out = HashMap::new();
        let mut batch: Vec<re::Digest> = Vec::new();
        let mut batch_size = 0;
        let mut seen = HashSet::new();
        for d in digests.iter().filter(|d| seen.insert(d.hash.clone())) {
            let size = usize::try_from(d.size_bytes).unwrap_or(usize::MAX);
            if size == 0 {
                out.insert(d.hash.clone(), Vec::new());
            } else if !self.fits_batch(size) {
                let data = self.read_stream(d).await?;
                out.insert(d.hash.clone(), data);
            } else {
                if batch_size + size + PER_BLOB + BATCH_SLACK > self.caps.max_batch {
                    self.batch_read(std::mem::take(&mut batch), &mut out).await?;
                    batch_size = 0;
                }
                batch_size += size + PER_BLOB;
                batch.push(d.clone());
            }
        }
        if !batch.is_empty() {
            self.batch_read(batch, &mut out).await?;
        }
        for d in digests {
            let data = out.get(&d.hash).ok_or_else(|| {
                RemoteError::Invalid(format!("the CAS left {} out of its BatchReadBlobs reply", show(d)))
            })?;
            let got = self.caps.digest.of(data);
            if got == *d {
                continue;
            }
            let what = format!("the CAS returned {} bytes hashing to {} for {}", data.len(), show(&got), show(d));
            // The wrong size is not the blob asked for at all; the right size
            // with other bytes is a blob that rotted where it is stored.
            return Err(if got.size_bytes == d.size_bytes {
                RemoteError::Blob(what)
            } else {
                RemoteError::Invalid(what)
            });
        }
        Ok(out)
    }

    async fn batch_read(
        &self,
        digests: Vec<re::Digest>,
        out: &mut HashMap<String, Vec<u8>>,
    ) -> Result<(), RemoteError> {
        let req = re::BatchReadBlobsRequest {
            instance_name: self.instance.clone(),
            digests,
            acceptable_compressors: Vec::new(),
            digest_function: self.caps.digest.proto(),
        };
        let asked: HashSet<String> = req.digests.iter().map(|d| d.hash.clone()).collect();
        let resp = self
            .unary(self.cas().batch_read_blobs(self.req(req)))
            .await
            .map_err(|s| RemoteError::from_status("BatchReadBlobs", &s))?;
        for r in resp.responses {
            let digest = r.digest.unwrap_or_default();
            if !asked.contains(&digest.hash) {
                return Err(RemoteError::Invalid(format!(
                    "the CAS answered BatchReadBlobs with {}, which was not asked for",
                    show(&digest)
                )));
            }
            match r.status.filter(|s| s.code != 0) {
                Some(status) if status.code == tonic::Code::NotFound as i32 => {
                    return Err(missing_blob(&digest, &status.message));
                }
                Some(status) => {
                    let status = tonic::Status::new(tonic::Code::from_i32(status.code), status.message);
                    return Err(RemoteError::from_status(&format!("BatchReadBlobs {}", show(&digest)), &status));
                }
                None => {}
            }
            out.insert(digest.hash, r.data);
        }
        Ok(())
    }

    /// One blob through ByteStream, within [`Reapi::stream_deadline`] of
    /// its size and never more bytes than its digest says.
    async fn read_stream(&self, digest: &re::Digest) -> Result<Vec<u8>, RemoteError> {
        let what = format!("ByteStream.Read {}", show(digest));
        let expected = u64::try_from(digest.size_bytes)
            .map_err(|_| RemoteError::Invalid(format!("{what}: a digest of negative size")))?;
        let deadline = self.stream_deadline(expected);
        match tokio::time::timeout(deadline, self.read_stream_unbounded(digest, expected, &what)).await {
            Ok(read) => read,
            Err(_) => Err(RemoteError::Unavailable(format!("{what}: not finished within {deadline:?}"))),
        }
    }

    async fn read_stream_unbounded(
        &self,
        digest: &re::Digest,
        expected: u64,
        what: &str,
    ) -> Result<Vec<u8>, RemoteError> {
        let req = ReadRequest {
            resource_name: self.caps.digest.read_name(&self.instance, digest),
            read_offset: 0,
            read_limit: 0,
        };
        let mut client = ByteStreamClient::new(self.channel.clone()).max_decoding_message_size(MAX_MESSAGE);
        let mut stream =
            client.read(self.req_unbounded(req)).await.map_err(|s| RemoteError::from_status(what, &s))?.into_inner();
        // The digest's size comes from the server too: reserve no more than
        // one message up front, grow as bytes actually arrive.
        let mut data = Vec::with_capacity(usize::try_from(expected).unwrap_or(usize::MAX).min(MAX_MESSAGE));
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|s| RemoteError::from_status(what, &s))?.data;
            if (data.len() + chunk.len()) as u64 > expected {
                return Err(RemoteError::Invalid(format!(
                    "{what}: the server sent more than the {expected} bytes of the digest"
                )));
            }
            data.extend_from_slice(&chunk);
        }
        Ok(data)
    }
}

fn missing_blob(digest: &re::Digest, why: &str) -> RemoteError {
    RemoteError::Blob(format!("the CAS does not have {} ({})", show(digest), why.trim()))
}

/// A random upload id (ByteStream wants a UUID-shaped one).
fn uuid() -> String {
    let mut seed = blake3::Hasher::new();
    seed.update(&std::process::id().to_le_bytes());
    seed.update(format!("{:?}", std::time::SystemTime::now()).as_bytes());
    seed.update(format!("{:?}", std::thread::current().id()).as_bytes());
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    seed.update(&COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_le_bytes());
    let h = seed.finalize().to_hex();
    format!("{}-{}-4{}-a{}-{}", &h[0..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
}
