//! The bot session: joining the server, the poll loop that reports every
//! lease's state and takes new ones, cancelled leases stopped, a dropped
//! session rejoined, and every lease handed back when the worker stops.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::devtools::remoteworkers::v1test2 as rw;
use tokio::sync::Notify;

use super::LOG;
use super::error::WorkerError;
use super::lease::{Finished, Mailbox, Running, abort, lease_report, start_lease, status, stop_lease};
use crate::config::RemoteSettings;
use crate::guard::{Groups, grace_period, stop_group};
use crate::remote::{Reapi, RemoteError, bounded};

/// How often an idle worker asks for work.
pub(super) const POLL: Duration = Duration::from_millis(200);
/// The deadline of an UpdateBotSession call: under BuildGrid's 3 s
/// network timeout, so it answers at once instead of long-polling.
const UPDATE_DEADLINE: Duration = Duration::from_secs(2);

/// `vx worker` settings.
#[derive(Debug, Clone)]
pub(crate) struct WorkerOptions {
    pub remote: RemoteSettings,
    pub concurrency: usize,
    /// Matched against actions' platform properties (`OSFamily`, `ISA`, …).
    pub platform: BTreeMap<String, String>,
    pub bot_id: String,
    /// Where each action's input root is made (a fresh directory per lease).
    pub work_dir: PathBuf,
}

type BotsClient = rw::bots_client::BotsClient<tonic::transport::Channel>;

/// How long handing the leases back may take once the worker is told to
/// stop: a signal must end it within about a second, server or not.
const HAND_BACK_DEADLINE: Duration = Duration::from_millis(800);

/// Runs the worker until `stop` resolves with the exit code the signal
/// asks for (143 for SIGTERM, 130 for SIGINT), and returns that code.
/// Every call to the server is raced against `stop`: connecting, joining
/// (which the server may hold open) and each poll.
pub(crate) async fn run_worker(
    opts: WorkerOptions,
    groups: Groups,
    stop: impl std::future::Future<Output = u8>,
) -> Result<u8, WorkerError> {
    tokio::pin!(stop);
    let cas = tokio::select! {
        cas = Reapi::connect(&opts.remote) => cas.map_err(WorkerError::Connect)?,
        code = &mut stop => return Ok(code),
    };
    let mut bot = Bot::new(cas, &opts, groups);
    // CreateBotSession long-polls for work like UpdateBotSession and may
    // return holding leases, which the server sends only once: a lease
    // dropped here stayed assigned to this bot and never ran.
    tracing::info!(
        target: LOG,
        "{} joining {} (the server may hold the first call for a few seconds)",
        opts.bot_id,
        opts.remote.endpoint
    );
    // No lease is started before the server's answer: a stop while it is
    // held open leaves nothing to hand back.
    let mut session = tokio::select! {
        session = bot.join() => session?,
        code = &mut stop => return Ok(code),
    };
    tracing::info!(
        target: LOG,
        "{} joined {} as {} (capacity {})",
        opts.bot_id,
        opts.remote.endpoint,
        session.name,
        opts.concurrency
    );
    let code = loop {
        tokio::select! {
            updated = bot.update(&mut session) => updated?,
            code = &mut stop => break code,
        }
        tokio::select! {
            code = &mut stop => break code,
            () = bot.done.notified() => {}
            () = tokio::time::sleep(POLL) => {}
        }
    };
    bot.shut_down(session).await;
    Ok(code)
}

/// The worker's side of the session: its leases and where they report.
struct Bot<'a> {
    bots: BotsClient,
    cas: Reapi,
    opts: &'a WorkerOptions,
    groups: Groups,
    /// Woken when a lease finishes, so it is reported without waiting a poll.
    done: Arc<Notify>,
    results: Finished,
    running: HashMap<String, Running>,
}

impl<'a> Bot<'a> {
    fn new(cas: Reapi, opts: &'a WorkerOptions, groups: Groups) -> Bot<'a> {
        Bot {
            bots: rw::bots_client::BotsClient::new(cas.channel()),
            cas,
            opts,
            groups,
            done: Arc::new(Notify::new()),
            results: Arc::default(),
            running: HashMap::new(),
        }
    }

    /// Creates a session and starts the leases it came back with.
    async fn join(&mut self) -> Result<rw::BotSession, WorkerError> {
        let opts = self.opts;
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
        let req = self.cas.req_unbounded(rw::CreateBotSessionRequest {
            parent: opts.remote.instance_name.clone(),
            bot_session: Some(session),
        });
        let session = self.bots.create_bot_session(req).await.map(tonic::Response::into_inner).map_err(|s| {
            WorkerError::Join {
                endpoint: opts.remote.endpoint.clone(),
                source: RemoteError::from_status("CreateBotSession", &s),
            }
        })?;
        self.start_fresh(&session.leases);
        Ok(session)
    }

    /// Starts the leases the server assigned that are not running yet.
    fn start_fresh(&mut self, leases: &[rw::Lease]) {
        for lease in leases {
            let fresh = lease.state == rw::LeaseState::Active as i32 || lease.state == rw::LeaseState::Pending as i32;
            if fresh && !self.running.contains_key(&lease.id) {
                let mailbox = Mailbox { results: self.results.clone(), done: self.done.clone() };
                let r = start_lease(lease.clone(), &self.cas, self.opts, &self.groups, mailbox);
                self.running.insert(lease.id.clone(), r);
            }
        }
    }

    /// One UpdateBotSession round: report every lease, then follow the
    /// answer (new leases, cancelled ones, a session the server dropped).
    async fn update(&mut self, session: &mut rw::BotSession) -> Result<(), WorkerError> {
        for (id, outcome) in self.results.lock().await.drain() {
            if let Some(r) = self.running.get_mut(&id) {
                r.result = Some(outcome);
            }
        }
        session.leases = self.running.values().map(lease_report).collect();
        // Sent empty, the version never matches the server's, so BuildGrid
        // resynchronises this bot's leases from its database on every call.
        // Echoing it back lets BuildGrid 0.4.4 answer from the bot's own
        // report on its fast path, and a lease assigned in between was seen
        // to stay assigned to this bot without ever being delivered.
        session.version = String::new();
        let mut req = self.cas.req(rw::UpdateBotSessionRequest {
            name: session.name.clone(),
            bot_session: Some(session.clone()),
            update_mask: None,
        });
        req.set_timeout(UPDATE_DEADLINE);
        match bounded(UPDATE_DEADLINE, self.bots.update_bot_session(req)).await {
            Ok(answered) => self.follow(answered, session),
            Err(s) if matches!(s.code(), tonic::Code::InvalidArgument | tonic::Code::NotFound) => {
                // The server dropped the session (it thought this bot dead):
                // its leases went back to the queue, so stop them and rejoin.
                tracing::info!(target: LOG, "the server dropped the session ({}); rejoining", s.message());
                for r in self.running.values() {
                    stop_lease(r, &self.groups);
                }
                self.running.clear();
                *session = self.join().await?;
            }
            Err(s) => {
                tracing::info!(target: LOG, "{}; retrying", RemoteError::from_status("UpdateBotSession", &s));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        Ok(())
    }

    /// Takes the server's answer: reported completions are acknowledged, a
    /// lease it no longer lists was cancelled, a new one is started.
    fn follow(&mut self, answered: rw::BotSession, session: &mut rw::BotSession) {
        self.running.retain(|_, r| r.result.is_none());
        let listed: HashSet<&str> = answered.leases.iter().map(|l| l.id.as_str()).collect();
        for (id, r) in &self.running {
            if !listed.contains(id.as_str()) {
                tracing::info!(target: LOG, "lease {id} was cancelled; stopping it");
                stop_lease(r, &self.groups);
            }
        }
        self.running.retain(|id, _| listed.contains(id.as_str()));
        self.start_fresh(&answered.leases);
        session.expire_time = answered.expire_time;
    }

    /// Stops every action and hands its lease back for another worker.
    async fn shut_down(mut self, mut session: rw::BotSession) {
        let mut stops = Vec::new();
        for r in self.running.values() {
            if let Some(pgid) = *r.pgid.lock().expect("pgid lock poisoned") {
                stops.push(stop_group(pgid, grace_period()));
            }
            abort(r);
        }
        futures_util::future::join_all(stops).await;
        session.status = rw::BotStatus::BotTerminating as i32;
        session.leases = self
            .running
            .values()
            .map(|r| {
                let mut lease = r.lease.clone();
                lease.state = rw::LeaseState::Completed as i32;
                lease.status = Some(status(tonic::Code::Unavailable, "the worker was stopped; run it elsewhere"));
                lease
            })
            .collect();
        let mut req = self.cas.req(rw::UpdateBotSessionRequest {
            name: session.name.clone(),
            bot_session: Some(session),
            update_mask: None,
        });
        req.set_timeout(HAND_BACK_DEADLINE);
        let _ = tokio::time::timeout(HAND_BACK_DEADLINE, self.bots.update_bot_session(req)).await;
        tracing::info!(target: LOG, "stopped ({} leases handed back)", self.running.len());
    }
}
