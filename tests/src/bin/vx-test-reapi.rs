//! `vx-test-reapi --port-file F --fault FAULT [--log F] [--lease]`: a REAPI
//! v2 server for the tests that misbehaves on purpose. It speaks the real
//! protocol (Capabilities, ActionCache, ContentAddressableStorage,
//! ByteStream, and the Remote Workers API's Bots service for `vx worker`)
//! over gRPC on 127.0.0.1, on a port of its choosing written to F.
//!
//! Writes are always honest: blobs and action results are kept in memory,
//! so `vx run` stores real vx entries and a later run finds them. Reads of
//! blobs then misbehave as FAULT says (`honest` for none):
//!
//! | fault | what a blob read gets |
//! |-------|-----------------------|
//! | `missing` | BatchReadBlobs leaves every blob out of its reply |
//! | `wrong-size` | each blob with one byte more |
//! | `mismatch` | each blob with its bytes flipped (right size, wrong hash) |
//! | `oversized` | ByteStream sends the blob, then 16 MiB more |
//! | `endless` | ByteStream sends 1 MiB chunks forever |
//! | `stall` | ByteStream sends a byte every 300 ms, then hangs (slow loris) |
//! | `reset` | ByteStream sends half the blob, then ends the call with `ABORTED` |
//! | `rst-stream` | ByteStream sends its first message, then an HTTP/2 `RST_STREAM` (`reset.rs`) |
//! | `unavailable` | every call, capabilities included, is UNAVAILABLE |
//! | `lying-caps` | capabilities offer BLAKE3 and 1 GiB batches; reads under BLAKE3 are refused |
//!
//! The ByteStream faults advertise a batch limit of one byte, so that
//! every blob travels through ByteStream. With `--lease`, the first bot
//! to join gets one lease for an action the server made itself (its
//! action, command and input root are exempt from the fault, its one
//! input file is not) and each completed lease is appended to the log as
//! `lease ID completed: code N: MESSAGE`. Each ByteStream read is logged
//! as `ByteStream.Read HASH` when it starts.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::bytestream::{self as bs, byte_stream_server::ByteStream};
use futures_util::{Stream, StreamExt};
use prost::Message;
use sha2::Digest as _;
use tonic::{Request, Response, Status};

#[path = "vx-test-reapi/bots.rs"]
mod bots;
#[path = "vx-test-reapi/reset.rs"]
mod reset;

const USAGE: &str = "vx-test-reapi --port-file F --fault FAULT [--log F] [--lease]";
const CHUNK: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Honest,
    Missing,
    WrongSize,
    Mismatch,
    Oversized,
    Endless,
    Stall,
    Reset,
    RstStream,
    Unavailable,
    LyingCaps,
}

impl Fault {
    fn parse(s: &str) -> Option<Fault> {
        Some(match s {
            "honest" => Fault::Honest,
            "missing" => Fault::Missing,
            "wrong-size" => Fault::WrongSize,
            "mismatch" => Fault::Mismatch,
            "oversized" => Fault::Oversized,
            "endless" => Fault::Endless,
            "stall" => Fault::Stall,
            "reset" => Fault::Reset,
            "rst-stream" => Fault::RstStream,
            "unavailable" => Fault::Unavailable,
            "lying-caps" => Fault::LyingCaps,
            _ => return None,
        })
    }

    fn streams(self) -> bool {
        matches!(self, Fault::Oversized | Fault::Endless | Fault::Stall | Fault::Reset | Fault::RstStream)
    }
}

/// What the server holds and how it misbehaves.
struct State {
    fault: Fault,
    cas: Mutex<HashMap<String, Vec<u8>>>,
    ac: Mutex<HashMap<String, re::ActionResult>>,
    /// Blobs served honestly whatever the fault (the lease's own action).
    exempt: Mutex<HashSet<String>>,
    log: Option<PathBuf>,
    lease: Mutex<Option<bots::rw::Lease>>,
    reported: Mutex<HashSet<String>>,
}

type Shared = Arc<State>;

impl State {
    fn refuse_all(&self) -> Result<(), Status> {
        if self.fault == Fault::Unavailable {
            return Err(Status::unavailable("the hostile server is unavailable, as it always is"));
        }
        Ok(())
    }

    fn faulty(&self, hash: &str) -> bool {
        self.fault != Fault::Honest && !self.exempt.lock().unwrap().contains(hash)
    }

    fn put(&self, data: Vec<u8>) -> re::Digest {
        let digest = sha256(&data);
        self.cas.lock().unwrap().insert(digest.hash.clone(), data);
        digest
    }

    fn note(&self, line: &str) {
        if let Some(log) = &self.log {
            vx_tests::append_line(log, line);
        }
    }
}

fn sha256(data: &[u8]) -> re::Digest {
    let hash = sha2::Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect();
    re::Digest { hash, size_bytes: data.len() as i64 }
}

struct Server(Shared);

#[tonic::async_trait]
impl re::capabilities_server::Capabilities for Server {
    async fn get_capabilities(
        &self,
        _: Request<re::GetCapabilitiesRequest>,
    ) -> Result<Response<re::ServerCapabilities>, Status> {
        self.0.refuse_all()?;
        use re::digest_function::Value;
        let (digests, max_batch) = match self.0.fault {
            Fault::LyingCaps => (vec![Value::Blake3 as i32], 1 << 30),
            f if f.streams() => (vec![Value::Sha256 as i32], 1),
            _ => (vec![Value::Sha256 as i32], 4 << 20),
        };
        Ok(Response::new(re::ServerCapabilities {
            cache_capabilities: Some(re::CacheCapabilities {
                digest_functions: digests,
                action_cache_update_capabilities: Some(re::ActionCacheUpdateCapabilities { update_enabled: true }),
                max_batch_total_size_bytes: max_batch,
                ..Default::default()
            }),
            execution_capabilities: None,
            ..Default::default()
        }))
    }
}

#[tonic::async_trait]
impl re::action_cache_server::ActionCache for Server {
    async fn get_action_result(
        &self,
        req: Request<re::GetActionResultRequest>,
    ) -> Result<Response<re::ActionResult>, Status> {
        self.0.refuse_all()?;
        let hash = req.into_inner().action_digest.unwrap_or_default().hash;
        let found = self.0.ac.lock().unwrap().get(&hash).cloned();
        found.map(Response::new).ok_or_else(|| Status::not_found("no such action result"))
    }

    async fn update_action_result(
        &self,
        req: Request<re::UpdateActionResultRequest>,
    ) -> Result<Response<re::ActionResult>, Status> {
        self.0.refuse_all()?;
        let req = req.into_inner();
        let result = req.action_result.unwrap_or_default();
        self.0.ac.lock().unwrap().insert(req.action_digest.unwrap_or_default().hash, result.clone());
        Ok(Response::new(result))
    }
}

#[tonic::async_trait]
impl re::content_addressable_storage_server::ContentAddressableStorage for Server {
    async fn find_missing_blobs(
        &self,
        req: Request<re::FindMissingBlobsRequest>,
    ) -> Result<Response<re::FindMissingBlobsResponse>, Status> {
        self.0.refuse_all()?;
        let cas = self.0.cas.lock().unwrap();
        let missing = req.into_inner().blob_digests.into_iter().filter(|d| !cas.contains_key(&d.hash)).collect();
        Ok(Response::new(re::FindMissingBlobsResponse { missing_blob_digests: missing }))
    }

    async fn batch_update_blobs(
        &self,
        req: Request<re::BatchUpdateBlobsRequest>,
    ) -> Result<Response<re::BatchUpdateBlobsResponse>, Status> {
        self.0.refuse_all()?;
        let mut responses = Vec::new();
        for r in req.into_inner().requests {
            let digest = r.digest.unwrap_or_default();
            self.0.cas.lock().unwrap().insert(digest.hash.clone(), r.data);
            responses.push(re::batch_update_blobs_response::Response { digest: Some(digest), status: None });
        }
        Ok(Response::new(re::BatchUpdateBlobsResponse { responses }))
    }

    async fn batch_read_blobs(
        &self,
        req: Request<re::BatchReadBlobsRequest>,
    ) -> Result<Response<re::BatchReadBlobsResponse>, Status> {
        self.0.refuse_all()?;
        let req = req.into_inner();
        if self.0.fault == Fault::LyingCaps && req.digest_function == re::digest_function::Value::Blake3 as i32 {
            return Err(Status::invalid_argument("digest function BLAKE3 is not supported"));
        }
        let mut responses = Vec::new();
        for digest in req.digests {
            let data = self.0.cas.lock().unwrap().get(&digest.hash).cloned();
            let Some(mut data) = data else {
                let status = bazel_remote_apis::google::rpc::Status {
                    code: tonic::Code::NotFound as i32,
                    message: "not in the CAS".into(),
                    details: Vec::new(),
                };
                responses.push(re::batch_read_blobs_response::Response {
                    digest: Some(digest),
                    data: Vec::new(),
                    compressor: 0,
                    status: Some(status),
                });
                continue;
            };
            if self.0.faulty(&digest.hash) {
                match self.0.fault {
                    Fault::Missing => continue,
                    Fault::WrongSize => data.push(b'!'),
                    Fault::Mismatch => data.iter_mut().for_each(|b| *b = !*b),
                    _ => {}
                }
            }
            responses.push(re::batch_read_blobs_response::Response {
                digest: Some(digest),
                data,
                compressor: 0,
                status: None,
            });
        }
        Ok(Response::new(re::BatchReadBlobsResponse { responses }))
    }

    type GetTreeStream = Pin<Box<dyn Stream<Item = Result<re::GetTreeResponse, Status>> + Send>>;

    async fn get_tree(&self, _: Request<re::GetTreeRequest>) -> Result<Response<Self::GetTreeStream>, Status> {
        Err(Status::unimplemented("GetTree"))
    }

    async fn split_blob(&self, _: Request<re::SplitBlobRequest>) -> Result<Response<re::SplitBlobResponse>, Status> {
        Err(Status::unimplemented("SplitBlob"))
    }

    type GetChunkMappingStream = Pin<Box<dyn Stream<Item = Result<re::GetChunkMappingResponse, Status>> + Send>>;

    async fn get_chunk_mapping(
        &self,
        _: Request<re::GetChunkMappingRequest>,
    ) -> Result<Response<Self::GetChunkMappingStream>, Status> {
        Err(Status::unimplemented("GetChunkMapping"))
    }

    async fn splice_blob(&self, _: Request<re::SpliceBlobRequest>) -> Result<Response<re::SpliceBlobResponse>, Status> {
        Err(Status::unimplemented("SpliceBlob"))
    }

    async fn register_chunk_mapping(
        &self,
        _: Request<tonic::Streaming<re::RegisterChunkMappingRequest>>,
    ) -> Result<Response<re::RegisterChunkMappingResponse>, Status> {
        Err(Status::unimplemented("RegisterChunkMapping"))
    }
}

type ReadStream = Pin<Box<dyn Stream<Item = Result<bs::ReadResponse, Status>> + Send>>;

fn chunks(data: Vec<u8>) -> Vec<Result<bs::ReadResponse, Status>> {
    data.chunks(CHUNK).map(|c| Ok(bs::ReadResponse { data: c.to_vec() })).collect()
}

#[tonic::async_trait]
impl ByteStream for Server {
    type ReadStream = ReadStream;

    async fn read(&self, req: Request<bs::ReadRequest>) -> Result<Response<ReadStream>, Status> {
        self.0.refuse_all()?;
        let name = req.into_inner().resource_name;
        // `[instance/]blobs/[fn/]HASH/SIZE`: the hash is the last but one part.
        let parts: Vec<&str> = name.rsplit('/').collect();
        let hash = parts.get(1).copied().unwrap_or_default().to_string();
        let data = self.0.cas.lock().unwrap().get(&hash).cloned().ok_or_else(|| Status::not_found(name.clone()))?;
        let fault = if self.0.faulty(&hash) { self.0.fault } else { Fault::Honest };
        self.0.note(&format!("ByteStream.Read {hash}"));
        let stream: ReadStream = match fault {
            Fault::Oversized => {
                let mut all = chunks(data);
                all.extend((0..16).map(|_| Ok(bs::ReadResponse { data: vec![0; CHUNK] })));
                Box::pin(tokio_stream::iter(all))
            }
            Fault::Endless => {
                Box::pin(tokio_stream::iter(std::iter::repeat_with(|| Ok(bs::ReadResponse { data: vec![7; CHUNK] }))))
            }
            Fault::Stall => Box::pin(futures_util::stream::unfold(data.into_iter(), |mut bytes| async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                match bytes.next() {
                    Some(b) => Some((Ok(bs::ReadResponse { data: vec![b] }), bytes)),
                    None => futures_util::future::pending().await,
                }
            })),
            Fault::Reset => {
                let half = data[..data.len() / 2].to_vec();
                let mut all = chunks(half);
                all.push(Err(Status::aborted("the hostile server reset the stream")));
                Box::pin(tokio_stream::iter(all))
            }
            Fault::RstStream => {
                // Two messages, a pause between them so that they travel as
                // two HTTP/2 frames: the layer resets after the first.
                let half = data.len().div_ceil(2).max(1);
                let parts: Vec<Vec<u8>> = data.chunks(half).map(<[u8]>::to_vec).collect();
                Box::pin(futures_util::stream::unfold(parts.into_iter(), |mut parts| async move {
                    let part = parts.next()?;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Some((Ok(bs::ReadResponse { data: part }), parts))
                }))
            }
            _ => Box::pin(tokio_stream::iter(chunks(data))),
        };
        Ok(Response::new(stream))
    }

    async fn write(
        &self,
        req: Request<tonic::Streaming<bs::WriteRequest>>,
    ) -> Result<Response<bs::WriteResponse>, Status> {
        self.0.refuse_all()?;
        let mut stream = req.into_inner();
        let mut name = String::new();
        let mut data = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            if name.is_empty() {
                name = chunk.resource_name;
            }
            data.extend_from_slice(&chunk.data);
            if chunk.finish_write {
                break;
            }
        }
        // `[instance/]uploads/UUID/blobs/[fn/]HASH/SIZE`.
        let parts: Vec<&str> = name.rsplit('/').collect();
        let hash = parts.get(1).copied().unwrap_or_default().to_string();
        let size = data.len() as i64;
        self.0.cas.lock().unwrap().insert(hash, data);
        Ok(Response::new(bs::WriteResponse { committed_size: size }))
    }

    async fn query_write_status(
        &self,
        _: Request<bs::QueryWriteStatusRequest>,
    ) -> Result<Response<bs::QueryWriteStatusResponse>, Status> {
        Err(Status::unimplemented("QueryWriteStatus"))
    }
}

/// The lease's action: `cat in.txt > out.txt`, its input made here.
fn make_lease(state: &State) -> bots::rw::Lease {
    let input = state.put(b"the input of the leased action\n".to_vec());
    let root = re::Directory {
        files: vec![re::FileNode {
            name: "in.txt".into(),
            digest: Some(input),
            is_executable: false,
            node_properties: None,
        }],
        ..Default::default()
    };
    let root_digest = state.put(root.encode_to_vec());
    let command = re::Command {
        arguments: vec!["sh".into(), "-c".into(), "cat in.txt > out.txt".into()],
        output_paths: vec!["out.txt".into()],
        ..Default::default()
    };
    let command_digest = state.put(command.encode_to_vec());
    let action = re::Action {
        command_digest: Some(command_digest.clone()),
        input_root_digest: Some(root_digest.clone()),
        ..Default::default()
    };
    state.exempt.lock().unwrap().extend([root_digest.hash, command_digest.hash]);
    bots::rw::Lease {
        id: "lease-1".into(),
        payload: Some(prost_types::Any {
            type_url: "type.googleapis.com/build.bazel.remote.execution.v2.Action".into(),
            value: action.encode_to_vec(),
        }),
        state: bots::rw::LeaseState::Pending as i32,
        ..Default::default()
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let (Some(port_file), Some(fault)) = (value("--port-file"), value("--fault").as_deref().and_then(Fault::parse))
    else {
        eprintln!("usage: {USAGE}");
        std::process::exit(2)
    };
    let state = Arc::new(State {
        fault,
        cas: Mutex::default(),
        ac: Mutex::default(),
        exempt: Mutex::default(),
        log: value("--log").map(PathBuf::from),
        lease: Mutex::default(),
        reported: Mutex::default(),
    });
    if args.iter().any(|a| a == "--lease") {
        let lease = make_lease(&state);
        *state.lease.lock().unwrap() = Some(lease);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listen on 127.0.0.1");
    let port = listener.local_addr().expect("the listening address").port();
    let tmp = format!("{port_file}.tmp");
    std::fs::write(&tmp, port.to_string()).expect("write the port file");
    std::fs::rename(&tmp, &port_file).expect("publish the port file");
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tonic::transport::Server::builder()
        .layer(reset::ResetLayer { on: fault == Fault::RstStream })
        .add_service(re::capabilities_server::CapabilitiesServer::new(Server(state.clone())))
        .add_service(re::action_cache_server::ActionCacheServer::new(Server(state.clone())))
        .add_service(re::content_addressable_storage_server::ContentAddressableStorageServer::new(Server(
            state.clone(),
        )))
        .add_service(bs::byte_stream_server::ByteStreamServer::new(Server(state.clone())))
        .add_service(bots::BotsServer(state))
        .serve_with_incoming(incoming)
        .await
        .expect("serve");
}
