//! One lease: its action run as a task of its own in a fresh directory,
//! its outcome kept until the next session update reports it, and how it
//! reads to the server (ACTIVE while running, COMPLETED with a status and
//! the `ActionResult` once done).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::devtools::remoteworkers::v1test2 as rw;
use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::rpc::Status;
use prost::Message;
use tokio::sync::{Mutex, Notify};

use super::error::LeaseError;
use super::outputs::{Timeline, complete};
use super::session::WorkerOptions;
use super::{LOG, inputs, process};
use crate::guard::{Groups, grace_period, stop_group};
use crate::remote::{Reapi, re};

const ACTION_RESULT_TYPE: &str = "type.googleapis.com/build.bazel.remote.execution.v2.ActionResult";

/// A lease's status and, when it ran, its result.
pub(super) type Outcome = (Status, Option<re::ActionResult>);

/// Finished leases by id, waiting to be reported.
pub(super) type Finished = Arc<Mutex<HashMap<String, Outcome>>>;

/// A lease being worked on, or done and not yet reported.
pub(super) struct Running {
    pub lease: rw::Lease,
    /// The action's process group, once started (to stop it on cancel).
    pub pgid: Arc<std::sync::Mutex<Option<i32>>>,
    /// The lease's directory, removed when the lease ends or is cancelled.
    dir: PathBuf,
    handle: tokio::task::JoinHandle<Status>,
    pub result: Option<Outcome>,
}

/// What a lease's task works with besides its payload.
pub(super) struct LeaseContext {
    pub cas: Reapi,
    pub groups: Groups,
    pub pgid: Arc<std::sync::Mutex<Option<i32>>>,
    pub bot_id: String,
    /// The lease's own directory: the input root, and `HOME` and `TMPDIR`.
    pub dir: PathBuf,
}

/// Where a lease's outcome goes when its task ends.
pub(super) struct Mailbox {
    pub results: Finished,
    pub done: Arc<Notify>,
}

/// Starts `lease`'s action as a task in a directory of its own under
/// `--work-dir`.
pub(super) fn start_lease(
    lease: rw::Lease,
    cas: &Reapi,
    opts: &WorkerOptions,
    groups: &Groups,
    mailbox: Mailbox,
) -> Running {
    let pgid = Arc::new(std::sync::Mutex::new(None));
    let (id, payload) = (lease.id.clone(), lease.payload.clone());
    let dir = opts.work_dir.join(format!("lease-{}", sanitize(&lease.id)));
    let ctx = LeaseContext {
        cas: cas.clone(),
        groups: groups.clone(),
        pgid: pgid.clone(),
        bot_id: opts.bot_id.clone(),
        dir: dir.clone(),
    };
    tracing::info!(target: LOG, "lease {id}: started");
    let handle = tokio::spawn(async move {
        let began = std::time::Instant::now();
        let outcome = match run_action(&ctx, payload).await {
            Ok(result) => (status(tonic::Code::Ok, ""), Some(result)),
            Err(LeaseError::Timeout) => {
                (status(tonic::Code::DeadlineExceeded, "the action ran past its timeout"), None)
            }
            Err(LeaseError::Infra(why)) => (status(tonic::Code::Unavailable, &why), None),
            Err(LeaseError::Bad(why)) => (status(tonic::Code::FailedPrecondition, &why), None),
        };
        let _ = tokio::fs::remove_dir_all(&ctx.dir).await;
        let took = began.elapsed().as_millis();
        match &outcome {
            (s, _) if s.code != 0 => tracing::info!(target: LOG, "lease {id}: {} after {took} ms", s.message),
            (_, Some(r)) => tracing::info!(target: LOG, "lease {id}: exit code {} in {took} ms", r.exit_code),
            _ => {}
        }
        let code = outcome.0.clone();
        mailbox.results.lock().await.insert(id, outcome);
        mailbox.done.notify_one();
        code
    });
    Running { lease, pgid, dir, handle, result: None }
}

/// Fetches, runs and reports one action: the input root in the lease's
/// directory, the command under the guard, the outputs uploaded.
async fn run_action(ctx: &LeaseContext, payload: Option<prost_types::Any>) -> Result<re::ActionResult, LeaseError> {
    let started = SystemTime::now();
    let (action, command) = inputs::fetch_action(&ctx.cas, payload).await?;
    inputs::materialise(&ctx.cas, &action, &ctx.dir).await?;
    let fetched = SystemTime::now();
    let workdir = process::working_dir(&ctx.dir, &command).await?;
    let (exit_code, log) = process::run(ctx, &action, &command, &workdir).await?;
    let times = Timeline { started, fetched, executed: SystemTime::now() };
    complete(&ctx.cas, &workdir, &command, exit_code, log, times, &ctx.bot_id).await
}

/// The lease as the server should see it now: ACTIVE while running,
/// COMPLETED with a status and result once done.
pub(super) fn lease_report(r: &Running) -> rw::Lease {
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
pub(super) fn stop_lease(r: &Running, groups: &Groups) {
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

/// Aborts a lease's task at shutdown (its group is stopped by the caller).
pub(super) fn abort(r: &Running) {
    r.handle.abort();
}

pub(super) fn status(code: tonic::Code, message: &str) -> Status {
    Status { code: code as i32, message: message.to_string(), details: Vec::new() }
}

/// A lease id as a directory name.
fn sanitize(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}
