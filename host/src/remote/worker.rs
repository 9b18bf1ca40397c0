//! `vx worker`: a bot of the Remote Workers API (the protocol BuildGrid
//! hands work out with). It keeps a bot session, takes leases (each holds
//! an `Action`), materialises the action's input root in a fresh directory,
//! runs the command under the guard — its own session and group, the
//! action's timeout, nothing left behind — uploads the outputs and stdout,
//! and completes the lease with the `ActionResult`; the server writes the
//! action cache and answers the client.
//!
//! The session is polled with a short deadline (BuildGrid answers at once
//! then, instead of holding the call open), right after a lease finishes
//! and otherwise every [`POLL`]. A lease the server stops listing was
//! cancelled: its group is stopped. SIGINT or SIGTERM stops every running
//! action and hands its lease back (UNAVAILABLE, which the server
//! re-queues) before the worker exits.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::devtools::remoteworkers::v1test2 as rw;
use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::rpc::Status;
use prost::Message;
use tokio::io::AsyncReadExt;
use tokio::sync::{Mutex, Notify};

use super::client::{Reapi, RemoteError, bounded};
use super::re;
use super::tree::{TreeFile, TreeLink, build};
use crate::config::RemoteSettings;
use crate::guard::{Groups, RUN_ID_VAR, TaskCommand, grace_period, spawn_isolated, stop_group};

/// How often an idle worker asks for work.
const POLL: Duration = Duration::from_millis(200);
/// The deadline of an UpdateBotSession call: under BuildGrid's 3 s
/// network timeout, so it answers at once instead of long-polling.
const UPDATE_DEADLINE: Duration = Duration::from_secs(2);
const ACTION_RESULT_TYPE: &str = "type.googleapis.com/build.bazel.remote.execution.v2.ActionResult";

/// `vx worker` settings.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    pub remote: RemoteSettings,
    pub concurrency: usize,
    /// Matched against actions' platform properties (`OSFamily`, `ISA`, …).
    pub platform: BTreeMap<String, String>,
    pub bot_id: String,
    /// Where each action's input root is made (a fresh directory per lease).
    pub work_dir: PathBuf,
}

/// Finished leases by id, waiting to be reported.
type Finished = Arc<Mutex<HashMap<String, (Status, Option<re::ActionResult>)>>>;

/// A lease being worked on, or done and not yet reported.
struct Running {
    lease: rw::Lease,
    /// The action's process group, once started (to stop it on cancel).
    pgid: Arc<std::sync::Mutex<Option<i32>>>,
    /// The lease's directory, removed when the lease ends or is cancelled.
    dir: PathBuf,
    handle: tokio::task::JoinHandle<Status>,
    result: Option<(Status, Option<re::ActionResult>)>,
}

/// Runs the worker until `stop` resolves.
pub async fn run_worker(
    opts: WorkerOptions,
    groups: Groups,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let cas = Reapi::connect(&opts.remote).await.map_err(|e| e.to_string())?;
    let mut bots = rw::bots_client::BotsClient::new(cas.channel.clone());
    let done = Arc::new(Notify::new());
    let results: Finished = Arc::default();
    let mut running: HashMap<String, Running> = HashMap::new();
    let start_fresh = |leases: &[rw::Lease], running: &mut HashMap<String, Running>| {
        for lease in leases {
            let fresh = lease.state == rw::LeaseState::Active as i32 || lease.state == rw::LeaseState::Pending as i32;
            if fresh && !running.contains_key(&lease.id) {
                let r = start_lease(lease.clone(), &cas, &opts, &groups, results.clone(), done.clone());
                running.insert(lease.id.clone(), r);
            }
        }
    };
    // CreateBotSession long-polls for work like UpdateBotSession and may
    // return holding leases, which the server sends only once: a lease
    // dropped here stayed assigned to this bot and never ran.
    eprintln!(
        "vx worker: {} joining {} (the server may hold the first call for a few seconds)",
        opts.bot_id, opts.remote.endpoint
    );
    let mut session = create_session(&mut bots, &cas, &opts).await?;
    start_fresh(&session.leases, &mut running);
    eprintln!(
        "vx worker: {} joined {} as {} (capacity {})",
        opts.bot_id, opts.remote.endpoint, session.name, opts.concurrency
    );
    tokio::pin!(stop);
    loop {
        // Collect what finished since the last call.
        for (id, outcome) in results.lock().await.drain() {
            if let Some(r) = running.get_mut(&id) {
                r.result = Some(outcome);
            }
        }
        session.leases = running.values().map(lease_report).collect();
        // Sent empty, the version never matches the server's, so BuildGrid
        // resynchronises this bot's leases from its database on every call.
        // Echoing it back lets BuildGrid 0.4.4 answer from the bot's own
        // report on its fast path, and a lease assigned in between was seen
        // to stay assigned to this bot without ever being delivered.
        session.version = String::new();
        let mut req = cas.req(rw::UpdateBotSessionRequest {
            name: session.name.clone(),
            bot_session: Some(session.clone()),
            update_mask: None,
        });
        req.set_timeout(UPDATE_DEADLINE);
        match bounded(UPDATE_DEADLINE, bots.update_bot_session(req)).await {
            Ok(answered) => {
                // Reported completions are acknowledged.
                running.retain(|_, r| r.result.is_none());
                let listed: std::collections::HashSet<&str> = answered.leases.iter().map(|l| l.id.as_str()).collect();
                for (id, r) in &running {
                    if !listed.contains(id.as_str()) {
                        eprintln!("vx worker: lease {id} was cancelled; stopping it");
                        stop_lease(r, &groups);
                    }
                }
                running.retain(|id, _| listed.contains(id.as_str()));
                start_fresh(&answered.leases, &mut running);
                session.expire_time = answered.expire_time;
            }
            Err(s) if matches!(s.code(), tonic::Code::InvalidArgument | tonic::Code::NotFound) => {
                // The server dropped the session (it thought this bot dead):
                // its leases went back to the queue, so stop them and rejoin.
                eprintln!("vx worker: the server dropped the session ({}); rejoining", s.message());
                for r in running.values() {
                    stop_lease(r, &groups);
                }
                running.clear();
                session = create_session(&mut bots, &cas, &opts).await?;
                start_fresh(&session.leases, &mut running);
            }
            Err(s) => {
                eprintln!("vx worker: {}; retrying", RemoteError::from_status("UpdateBotSession", &s));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        tokio::select! {
            () = &mut stop => break,
            () = done.notified() => {}
            () = tokio::time::sleep(POLL) => {}
        }
    }
    shut_down(&mut bots, &cas, session, running).await;
    Ok(())
}

async fn create_session(
    bots: &mut rw::bots_client::BotsClient<tonic::transport::Channel>,
    cas: &Reapi,
    opts: &WorkerOptions,
) -> Result<rw::BotSession, String> {
    let properties =
        opts.platform.iter().map(|(k, v)| rw::device::Property { key: k.clone(), value: v.clone() }).collect();
    let session = rw::BotSession {
        bot_id: opts.bot_id.clone(),
        status: rw::BotStatus::Ok as i32,
        worker: Some(rw::Worker {
            devices: vec![rw::Device { handle: "vx-worker".into(), properties }],
            properties: Vec::new(),
            configs: vec![rw::worker::Config { key: "capacity".into(), value: opts.concurrency.to_string() }],
        }),
        ..Default::default()
    };
    let req = cas.req_unbounded(rw::CreateBotSessionRequest {
        parent: opts.remote.instance_name.clone(),
        bot_session: Some(session),
    });
    bots.create_bot_session(req).await.map(tonic::Response::into_inner).map_err(|s| {
        format!("could not join {}: {}", opts.remote.endpoint, RemoteError::from_status("CreateBotSession", &s))
    })
}

/// The lease as the server should see it now: ACTIVE while running,
/// COMPLETED with a status and result once done.
fn lease_report(r: &Running) -> rw::Lease {
    let mut lease = r.lease.clone();
    match &r.result {
        None => lease.state = rw::LeaseState::Active as i32,
        Some((status, result)) => {
            lease.state = rw::LeaseState::Completed as i32;
            lease.status = Some(status.clone());
            lease.result = result
                .as_ref()
                .map(|res| prost_types::Any { type_url: ACTION_RESULT_TYPE.into(), value: res.encode_to_vec() });
        }
    }
    lease
}

/// Stops a cancelled lease: aborting its task skips the task's own
/// cleanup, so the group is unregistered and the directory removed here
/// (a long-running worker otherwise kept every cancelled input root).
fn stop_lease(r: &Running, groups: &Groups) {
    r.handle.abort();
    let pgid = *r.pgid.lock().expect("pgid lock poisoned");
    let (dir, groups) = (r.dir.clone(), groups.clone());
    tokio::spawn(async move {
        if let Some(pgid) = pgid {
            stop_group(pgid, grace_period()).await;
            groups.unregister(pgid);
        }
        let _ = tokio::fs::remove_dir_all(&dir).await;
    });
}

/// Stops every action and hands its lease back for another worker.
async fn shut_down(
    bots: &mut rw::bots_client::BotsClient<tonic::transport::Channel>,
    cas: &Reapi,
    mut session: rw::BotSession,
    running: HashMap<String, Running>,
) {
    let mut stops = Vec::new();
    for r in running.values() {
        if let Some(pgid) = *r.pgid.lock().expect("pgid lock poisoned") {
            stops.push(stop_group(pgid, grace_period()));
        }
        r.handle.abort();
    }
    futures_util::future::join_all(stops).await;
    session.status = rw::BotStatus::BotTerminating as i32;
    session.leases = running
        .values()
        .map(|r| {
            let mut lease = r.lease.clone();
            lease.state = rw::LeaseState::Completed as i32;
            lease.status = Some(status(tonic::Code::Unavailable, "the worker was stopped; run it elsewhere"));
            lease
        })
        .collect();
    let mut req = cas.req(rw::UpdateBotSessionRequest {
        name: session.name.clone(),
        bot_session: Some(session),
        update_mask: None,
    });
    req.set_timeout(UPDATE_DEADLINE);
    let _ = bounded(UPDATE_DEADLINE, bots.update_bot_session(req)).await;
    eprintln!("vx worker: stopped ({} leases handed back)", running.len());
}

fn status(code: tonic::Code, message: &str) -> Status {
    Status { code: code as i32, message: message.to_string(), details: Vec::new() }
}

fn start_lease(
    lease: rw::Lease,
    cas: &Reapi,
    opts: &WorkerOptions,
    groups: &Groups,
    results: Finished,
    done: Arc<Notify>,
) -> Running {
    let pgid = Arc::new(std::sync::Mutex::new(None));
    let (cas, groups, id, payload) = (cas.clone(), groups.clone(), lease.id.clone(), lease.payload.clone());
    let dir = opts.work_dir.join(format!("lease-{}", sanitize(&lease.id)));
    let lease_dir = dir.clone();
    let (bot_id, pgid_slot) = (opts.bot_id.clone(), pgid.clone());
    eprintln!("vx worker: lease {id}: started");
    let handle = tokio::spawn(async move {
        let began = std::time::Instant::now();
        let outcome = match run_action(&cas, payload, &dir, &groups, &pgid_slot, &bot_id).await {
            Ok(result) => (status(tonic::Code::Ok, ""), Some(result)),
            Err(LeaseError::Timeout) => {
                (status(tonic::Code::DeadlineExceeded, "the action ran past its timeout"), None)
            }
            Err(LeaseError::Infra(why)) => (status(tonic::Code::Unavailable, &why), None),
            Err(LeaseError::Bad(why)) => (status(tonic::Code::FailedPrecondition, &why), None),
        };
        let _ = tokio::fs::remove_dir_all(&dir).await;
        let took = began.elapsed().as_millis();
        match (&outcome.0, &outcome.1) {
            (s, _) if s.code != 0 => eprintln!("vx worker: lease {id}: {} after {took} ms", s.message),
            (_, Some(r)) => eprintln!("vx worker: lease {id}: exit code {} in {took} ms", r.exit_code),
            _ => {}
        }
        let code = outcome.0.clone();
        results.lock().await.insert(id, outcome);
        done.notify_one();
        code
    });
    Running { lease, pgid, dir: lease_dir, handle, result: None }
}

fn sanitize(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

enum LeaseError {
    Timeout,
    /// The worker or the CAS failed: another attempt may succeed.
    Infra(String),
    /// The action cannot run as given.
    Bad(String),
}

impl From<RemoteError> for LeaseError {
    fn from(e: RemoteError) -> Self {
        match e {
            RemoteError::Unavailable(m) => LeaseError::Infra(m),
            RemoteError::Refused(m) | RemoteError::Invalid(m) => LeaseError::Bad(m),
        }
    }
}

async fn run_action(
    cas: &Reapi,
    payload: Option<prost_types::Any>,
    dir: &Path,
    groups: &Groups,
    pgid_slot: &std::sync::Mutex<Option<i32>>,
    bot_id: &str,
) -> Result<re::ActionResult, LeaseError> {
    let started = SystemTime::now();
    let payload = payload.ok_or_else(|| LeaseError::Bad("the lease has no payload".into()))?;
    let action = if payload.type_url.ends_with("build.bazel.remote.execution.v2.Action") {
        re::Action::decode(payload.value.as_slice())
            .map_err(|e| LeaseError::Bad(format!("the Action does not decode: {e}")))?
    } else if payload.type_url.ends_with("build.bazel.remote.execution.v2.Digest") {
        let digest = re::Digest::decode(payload.value.as_slice()).map_err(|e| LeaseError::Bad(e.to_string()))?;
        let blob = cas.download(std::slice::from_ref(&digest)).await?;
        re::Action::decode(blob[&digest.hash].as_slice()).map_err(|e| LeaseError::Bad(e.to_string()))?
    } else {
        return Err(LeaseError::Bad(format!("unknown lease payload type {}", payload.type_url)));
    };
    let command_digest =
        action.command_digest.clone().ok_or_else(|| LeaseError::Bad("the Action has no command".into()))?;
    let command_blob = cas.download(std::slice::from_ref(&command_digest)).await?;
    let command = re::Command::decode(command_blob[&command_digest.hash].as_slice())
        .map_err(|e| LeaseError::Bad(format!("the Command does not decode: {e}")))?;
    let root =
        action.input_root_digest.clone().ok_or_else(|| LeaseError::Bad("the Action has no input root".into()))?;
    let (files, links) = cas.fetch_tree(&root).await?;
    materialise(cas, dir, &files, &links).await?;
    let fetched = SystemTime::now();

    let workdir = dir.join(&command.working_directory);
    super::super::cache::check_relative(&command.working_directory)
        .or_else(|e| if command.working_directory.is_empty() { Ok(()) } else { Err(e) })
        .map_err(LeaseError::Bad)?;
    tokio::fs::create_dir_all(&workdir)
        .await
        .map_err(|e| LeaseError::Infra(format!("create the working directory: {e}")))?;
    let mut args = command.arguments.iter();
    let program = args.next().ok_or_else(|| LeaseError::Bad("the Command has no arguments".into()))?;
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())),
        ("HOME".into(), dir.as_os_str().to_owned()),
        ("TMPDIR".into(), dir.as_os_str().to_owned()),
        (RUN_ID_VAR.into(), format!("worker-{bot_id}").into()),
    ];
    env.extend(command.environment_variables.iter().map(|v| (v.name.clone().into(), v.value.clone().into())));
    let program = if program.contains('/') && !program.starts_with('/') {
        workdir.join(program).into_os_string()
    } else {
        program.into()
    };
    let task = TaskCommand { program, args: args.map(Into::into).collect(), cwd: workdir.clone(), env };
    let mut proc = spawn_isolated(&task, groups)
        .map_err(|e| LeaseError::Bad(format!("could not start {:?}: {e}", task.program)))?;
    *pgid_slot.lock().expect("pgid lock poisoned") = Some(proc.pgid);
    let timeout = action
        .timeout
        .as_ref()
        .map(|t| Duration::new(t.seconds.max(0) as u64, t.nanos.max(0) as u32))
        .filter(|t| !t.is_zero());
    let mut log = Vec::new();
    let run = async {
        let _ = proc.output.read_to_end(&mut log).await;
        proc.child.wait().await
    };
    let exit = match timeout {
        Some(t) => match tokio::time::timeout(t, run).await {
            Ok(exit) => exit,
            Err(_) => {
                stop_group(proc.pgid, grace_period()).await;
                groups.unregister(proc.pgid);
                return Err(LeaseError::Timeout);
            }
        },
        None => run.await,
    };
    // Nothing the action started outlives it.
    stop_group(proc.pgid, grace_period()).await;
    groups.unregister(proc.pgid);
    let exit = exit.map_err(|e| LeaseError::Infra(format!("waiting for the action: {e}")))?;
    let exit_code =
        exit.code().unwrap_or_else(|| 128 + std::os::unix::process::ExitStatusExt::signal(&exit).unwrap_or(0));
    let executed = SystemTime::now();

    let mut result = collect_outputs(cas, &workdir, &command).await?;
    let f = cas.caps.digest;
    let stdout = f.of(&log);
    cas.upload(vec![(stdout.clone(), log)]).await?;
    result.stdout_digest = Some(stdout);
    result.exit_code = exit_code;
    let ts = |t: SystemTime| {
        let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        bazel_remote_apis::google::protobuf::Timestamp { seconds: d.as_secs() as i64, nanos: d.subsec_nanos() as i32 }
    };
    result.execution_metadata = Some(re::ExecutedActionMetadata {
        worker: bot_id.to_string(),
        worker_start_timestamp: Some(ts(started)),
        input_fetch_start_timestamp: Some(ts(started)),
        input_fetch_completed_timestamp: Some(ts(fetched)),
        execution_start_timestamp: Some(ts(fetched)),
        execution_completed_timestamp: Some(ts(executed)),
        worker_completed_timestamp: Some(ts(SystemTime::now())),
        ..Default::default()
    });
    Ok(result)
}

/// Writes the input root into `dir` (fresh), fetching file blobs in batches.
async fn materialise(cas: &Reapi, dir: &Path, files: &[TreeFile], links: &[TreeLink]) -> Result<(), LeaseError> {
    let _ = tokio::fs::remove_dir_all(dir).await;
    tokio::fs::create_dir_all(dir).await.map_err(|e| LeaseError::Infra(format!("create {}: {e}", dir.display())))?;
    for part in files.chunks(256) {
        let digests: Vec<re::Digest> = part.iter().map(|f| f.digest.clone()).collect();
        let blobs = cas.download(&digests).await?;
        for file in part {
            let dest = dir.join(&file.rel);
            if let Some(parent) = dest.parent() {
                tokio::fs::create_dir_all(parent).await.map_err(|e| LeaseError::Infra(e.to_string()))?;
            }
            tokio::fs::write(&dest, &blobs[&file.digest.hash]).await.map_err(|e| LeaseError::Infra(e.to_string()))?;
            let mode = if file.executable { 0o755 } else { 0o644 };
            tokio::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
                .await
                .map_err(|e| LeaseError::Infra(e.to_string()))?;
        }
    }
    for link in links {
        super::super::cache::check_link(&link.rel, &link.target).map_err(LeaseError::Bad)?;
        let dest = dir.join(&link.rel);
        if let Some(parent) = dest.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| LeaseError::Infra(e.to_string()))?;
        }
        tokio::fs::symlink(&link.target, &dest).await.map_err(|e| LeaseError::Infra(e.to_string()))?;
    }
    Ok(())
}

/// The declared outputs as they are after the run: files, links, and
/// directories as `Tree`s; every blob uploaded.
async fn collect_outputs(cas: &Reapi, workdir: &Path, command: &re::Command) -> Result<re::ActionResult, LeaseError> {
    let f = cas.caps.digest;
    let mut paths: Vec<String> = command.output_paths.clone();
    #[expect(deprecated, reason = "actions from REAPI v2.0 clients name outputs in these fields")]
    paths.extend(command.output_files.iter().chain(&command.output_directories).cloned());
    paths.sort();
    paths.dedup();
    let mut result = re::ActionResult::default();
    let mut blobs = Vec::new();
    for rel in paths {
        super::super::cache::check_relative(&rel).map_err(LeaseError::Bad)?;
        let path = workdir.join(&rel);
        let Ok(meta) = tokio::fs::symlink_metadata(&path).await else { continue };
        if meta.file_type().is_symlink() {
            let target = tokio::fs::read_link(&path).await.map_err(|e| LeaseError::Infra(e.to_string()))?;
            result.output_symlinks.push(re::OutputSymlink {
                path: rel,
                target: target.to_string_lossy().into_owned(),
                node_properties: None,
            });
        } else if meta.is_dir() {
            let (files, links, data) = read_dir_tree(f, &path).await?;
            let built = build(f, &files, &links);
            let tree = re::Tree { root: Some(built.root), children: built.children };
            let (tree_digest, tree_bytes) = f.of_message(&tree);
            blobs.extend(data);
            blobs.extend(built.dir_blobs);
            blobs.push((tree_digest.clone(), tree_bytes));
            result.output_directories.push(re::OutputDirectory {
                path: rel,
                tree_digest: Some(tree_digest),
                is_topologically_sorted: false,
                root_directory_digest: Some(built.root_digest),
            });
        } else {
            let data = tokio::fs::read(&path).await.map_err(|e| LeaseError::Infra(e.to_string()))?;
            let digest = f.of(&data);
            result.output_files.push(re::OutputFile {
                path: rel,
                digest: Some(digest.clone()),
                is_executable: meta.permissions().mode() & 0o111 != 0,
                ..Default::default()
            });
            blobs.push((digest, data));
        }
    }
    cas.upload(blobs).await?;
    Ok(result)
}

type DirTree = (Vec<TreeFile>, Vec<TreeLink>, Vec<(re::Digest, Vec<u8>)>);

/// Every file and link under `root`, relative to it, with the file bytes.
async fn read_dir_tree(f: super::DigestFn, root: &Path) -> Result<DirTree, LeaseError> {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let (mut files, mut links, mut blobs) = (Vec::new(), Vec::new(), Vec::new());
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|e| LeaseError::Infra(format!("{}: {e}", dir.display())))?;
            for entry in entries {
                let entry = entry.map_err(|e| LeaseError::Infra(e.to_string()))?;
                let path = entry.path();
                let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().into_owned();
                let meta = std::fs::symlink_metadata(&path).map_err(|e| LeaseError::Infra(e.to_string()))?;
                if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&path).map_err(|e| LeaseError::Infra(e.to_string()))?;
                    links.push(TreeLink { rel, target: target.to_string_lossy().into_owned() });
                } else if meta.is_dir() {
                    stack.push(path);
                } else {
                    let data = std::fs::read(&path).map_err(|e| LeaseError::Infra(e.to_string()))?;
                    let digest = f.of(&data);
                    files.push(TreeFile {
                        rel,
                        digest: digest.clone(),
                        executable: meta.permissions().mode() & 0o111 != 0,
                    });
                    blobs.push((digest, data));
                }
            }
        }
        Ok((files, links, blobs))
    })
    .await
    .map_err(|e| LeaseError::Infra(e.to_string()))?
}
