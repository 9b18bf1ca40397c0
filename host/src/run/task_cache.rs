//! The cache's part in one task's lifecycle: computing its key once its
//! dependencies have theirs, looking it up and restoring a hit, and
//! storing a success. A key that cannot be had, a corrupt entry or a
//! refused restore is a note and a miss, never a failed task.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::download::Pending;
use crate::cache::{Cache, CacheKey, KeyManifest, Lookup, Tier};
use crate::config::Task;
use crate::events::{Bus, CacheOutcome, Event, Phase};

/// Enough to compute a task's key, look it up and store its result.
#[derive(Debug)]
pub(crate) struct CacheJob {
    pub cache: Arc<Cache>,
    pub root: PathBuf,
    pub project_dir: PathBuf,
    pub task: Task,
    /// The executor's part of the key (`Executor::identity`).
    pub executor_config: String,
    /// Node index and id of each task this one depends on.
    pub deps: Vec<(usize, String)>,
    /// Every node's key, filled in as tasks compute theirs.
    pub keys: Arc<Mutex<Vec<Option<CacheKey>>>>,
    /// The task's node.
    pub node: usize,
    /// Whether a remote hit fetches its outputs at once (`--download`).
    pub fetch_outputs: bool,
    /// The run's hits whose outputs were left on the server, and every task
    /// this one depends on, directly or not (empty under `--download=all`).
    pub pending: Arc<Pending>,
    pub upstream: Vec<usize>,
}

/// A key, or why there is none.
enum Keyed {
    Key(CacheKey, Box<KeyManifest>),
    /// A dependency has no key: neither has this task (no note).
    NoDependencyKey,
    /// The inputs could not be read: the note to show.
    Failed(String),
}

/// What a lookup found: a restored hit, a miss, or the warning that turned
/// it into one; and when the restore began, if one did.
type Found = (Result<Option<(Box<crate::cache::Entry>, CacheOutcome)>, String>, Option<Instant>);

/// What [`CacheJob::begin`] did on one blocking thread.
pub(crate) struct Begun {
    /// When it began: the task's start, for its duration and spans.
    pub began: Instant,
    /// The task's lock, when it was free (or could not be made: `None`).
    pub lock: Option<super::task_lock::TaskLock>,
    /// Another vx holds the lock: nothing else was done.
    pub contended: bool,
    /// The lock was taken and let go again ([`Begun::release_lock`]): it
    /// must be taken again before the task runs.
    pub released: bool,
    key: Option<Keyed>,
    /// When keying ended and the lookup began; the lookup's result.
    looked: Option<(Instant, Found)>,
}

impl Begun {
    /// Whether [`CacheJob::begin`] found and restored a hit.
    pub(crate) fn is_hit(&self) -> bool {
        matches!(&self.looked, Some((_, (Ok(Some(_)), _))))
    }

    /// Lets the task's lock go while the task waits to be started: a batch
    /// begins many more tasks than may run, and each lock held is an open
    /// file. The key is kept; a clean miss is looked up again once the lock
    /// is taken again, since another vx may have stored the task meanwhile.
    pub(crate) fn release_lock(&mut self) {
        if self.lock.take().is_some() {
            self.released = true;
        }
        if matches!(&self.looked, Some((_, (Ok(None), _)))) {
            self.looked = None;
        }
    }
}

impl std::fmt::Debug for Begun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Begun")
            .field("contended", &self.contended)
            .field("locked", &self.lock.is_some())
            .field("hit", &self.is_hit())
            .finish_non_exhaustive()
    }
}

impl CacheJob {
    /// The dependencies' keys, once all of them have one.
    fn dependency_keys(&self) -> Option<Vec<(String, CacheKey)>> {
        let keys = self.keys.lock().expect("keys lock poisoned");
        self.deps.iter().map(|(n, id)| keys[*n].clone().map(|k| (id.clone(), k))).collect()
    }

    /// Keys the task on the calling (blocking) thread and records the key
    /// for its dependents.
    fn key_blocking(&self, node: usize, id: &str) -> Keyed {
        self.pending.forget(node);
        let Some(deps) = self.dependency_keys() else { return Keyed::NoDependencyKey };
        if let Err(why) = self.pending.fetch_inputs(&self.cache, &self.upstream, &self.project_dir, &self.task) {
            return Keyed::Failed(format!("not cached: {why}, which are among its inputs"));
        }
        match self.cache.task_key(&self.root, &self.project_dir, id, &self.task, &self.executor_config, &deps) {
            Ok((key, manifest)) => {
                self.keys.lock().expect("keys lock poisoned")[node] = Some(key.clone());
                Keyed::Key(key, Box::new(manifest))
            }
            Err(why) => Keyed::Failed(format!("not cached: {why}")),
        }
    }

    /// The task's declared input globs that matched no file of `manifest`.
    pub(crate) fn unmatched_inputs(&self, manifest: &KeyManifest) -> Vec<String> {
        let Some(inputs) = &self.task.inputs else { return Vec::new() };
        let project = self.project_dir.strip_prefix(&self.root).unwrap_or(std::path::Path::new(""));
        crate::inputs::unmatched_inputs(inputs, &project.to_string_lossy(), &manifest.files.0)
    }

    /// Looks `key` up and restores a hit, on the calling (blocking) thread.
    /// A remote hit whose outputs are not wanted yet leaves them on the
    /// server (`--download`): nothing is restored, and the task is pending.
    fn hit_blocking(&self, id: &str, key: &CacheKey) -> Found {
        match self.cache.lookup_tiers(key, self.fetch_outputs) {
            (Lookup::Hit(entry), Tier::RemoteWithoutOutputs) => {
                let dirs = (self.root.clone(), self.project_dir.clone());
                self.pending.leave(self.node, id, key, dirs, &self.task, &entry);
                (Ok(Some((entry, CacheOutcome::Remote))), None)
            }
            (Lookup::Hit(entry), tier) => {
                let restoring = Instant::now();
                let restored = match self.cache.restore(&self.root, &self.project_dir, &self.task, &entry) {
                    Ok(_) => {
                        Ok(Some((entry, if tier == Tier::Remote { CacheOutcome::Remote } else { CacheOutcome::Local })))
                    }
                    Err(why) => Err(format!("could not restore its outputs ({why}); running it")),
                };
                (restored, Some(restoring))
            }
            (Lookup::Miss, _) => (Ok(None), None),
            (Lookup::Corrupt(why), _) => {
                (Err(format!("its cache entry was corrupt ({why}) and is removed; running it")), None)
            }
            (Lookup::Unreadable(why), _) if self.cache.first_unreadable() => (
                Err(format!(
                    "could not read the cache at {} ({why}); tasks whose entries cannot be read run",
                    self.cache.store.dir().display()
                )),
                None,
            ),
            (Lookup::Unreadable(_), _) => (Ok(None), None),
        }
    }

    /// The start of a task that is not persistent, in one trip to a
    /// blocking thread: [`CacheJob::begin_blocking`]. A fully cached run is
    /// thousands of these; a trip per step cost more in thread wake-ups
    /// than the steps themselves.
    pub(crate) async fn begin(self: &Arc<Self>, node: usize, id: &str, look: bool) -> Begun {
        let (job, owned_id) = (self.clone(), id.to_string());
        let begun = tokio::task::spawn_blocking(move || job.begin_blocking(node, &owned_id, look)).await;
        begun.unwrap_or_else(|e| Begun {
            began: Instant::now(),
            lock: None,
            contended: false,
            released: false,
            key: Some(Keyed::Failed(format!("not cached: key computation failed: {e}"))),
            looked: None,
        })
    }

    /// Takes the task's lock without waiting, keys the task, and (when
    /// `look` says the task is cacheable and the cache is read) looks the
    /// key up and restores a hit, on the calling (blocking) thread. When
    /// another vx holds the lock nothing else is done (`contended`): the
    /// caller waits for it and goes the slow way.
    pub(crate) fn begin_blocking(&self, node: usize, id: &str, look: bool) -> Begun {
        let began = Instant::now();
        let lock = match super::task_lock::try_acquire(&self.root, id) {
            Err(super::task_lock::Held) => {
                return Begun { began, lock: None, contended: true, released: false, key: None, looked: None };
            }
            Ok(lock) => lock,
        };
        let key = self.key_blocking(node, id);
        let looked = match &key {
            Keyed::Key(key, _) if look => Some((Instant::now(), self.hit_blocking(id, key))),
            _ => None,
        };
        Begun { began, lock, contended: false, released: false, key: Some(key), looked }
    }

    /// The key [`CacheJob::begin`] computed, its note emitted.
    pub(crate) fn begun_key(&self, begun: &mut Begun, id: &str, events: &Bus) -> Option<(CacheKey, KeyManifest)> {
        settle_key(begun.key.take()?, id, events)
    }

    /// The lookup [`CacheJob::begin`] made, reported as [`CacheJob::try_hit`]
    /// reports its own; `None` when it made none.
    pub(crate) fn begun_hit(
        &self,
        begun: &mut Begun,
        id: &str,
        key: &CacheKey,
        events: &Bus,
    ) -> Option<Option<CacheOutcome>> {
        let (looking, found) = begun.looked.take()?;
        Some(report_hit(id, key, looking, Ok(found), events))
    }

    /// Computes the key once the dependencies' keys are known; records it
    /// for the dependents. `None` when it cannot be had (a dependency has
    /// none, or an input could not be read), with a note in the latter.
    pub(crate) async fn compute_key(
        self: &Arc<Self>,
        node: usize,
        id: &str,
        events: &Bus,
    ) -> Option<(CacheKey, KeyManifest)> {
        self.dependency_keys()?;
        let (job, owned_id) = (self.clone(), id.to_string());
        let keyed = tokio::task::spawn_blocking(move || job.key_blocking(node, &owned_id))
            .await
            .unwrap_or_else(|e| Keyed::Failed(format!("not cached: key computation failed: {e}")));
        settle_key(keyed, id, events)
    }

    /// Looks the key up and restores a hit, emitting `CacheHit`. A corrupt
    /// entry or a refused restore is a warning and a miss. Both steps are
    /// timed where they run and reported as spans once back here.
    pub(crate) async fn try_hit(self: &Arc<Self>, id: &str, key: &CacheKey, events: &Bus) -> Option<CacheOutcome> {
        let (job, key_owned, owned_id) = (self.clone(), key.clone(), id.to_string());
        let looking = Instant::now();
        let found = tokio::task::spawn_blocking(move || job.hit_blocking(&owned_id, &key_owned))
            .await
            .map_err(|e| e.to_string());
        report_hit(id, key, looking, found, events)
    }

    /// Fetches and restores the outputs the task's dependencies left on the
    /// server (`--download`), before it executes; `Err` says whose could
    /// not be had.
    pub(crate) async fn fetch_upstream(self: &Arc<Self>) -> Result<(), String> {
        let job = self.clone();
        tokio::task::spawn_blocking(move || job.pending.fetch_all(&job.cache, &job.upstream))
            .await
            .unwrap_or_else(|e| Err(format!("fetching its dependencies' outputs failed: {e}")))
    }

    /// Stores a success; a failure to store is a note, not a failed task.
    pub(crate) async fn store(
        &self,
        id: &str,
        key: CacheKey,
        manifest: KeyManifest,
        log: Vec<u8>,
        duration: Duration,
        events: &Bus,
    ) {
        if !self.cache.writes() {
            return;
        }
        let (cache, root, dir, task) =
            (self.cache.clone(), self.root.clone(), self.project_dir.clone(), self.task.clone());
        let saved = tokio::task::spawn_blocking(move || {
            if let Some(path) = cache.changed_input(&root, &dir, &task, &manifest)? {
                return Ok(Some(path));
            }
            cache.save(&key, manifest, (&root, &dir), &task, &log, duration).map(|()| None)
        })
        .await;
        match saved {
            Ok(Ok(Some(path))) => events.note(
                id,
                &format!("not cached: its input {path} changed while it ran; run it again to cache the result"),
            ),
            Ok(Err(why)) => events.note(id, &format!("not cached: {why}")),
            _ => {}
        }
    }
}

/// A key's note, if it has one, emitted; the key itself, if there is one.
fn settle_key(keyed: Keyed, id: &str, events: &Bus) -> Option<(CacheKey, KeyManifest)> {
    match keyed {
        Keyed::Key(key, manifest) => Some((key, *manifest)),
        Keyed::NoDependencyKey => None,
        Keyed::Failed(note) => {
            events.note(id, &note);
            None
        }
    }
}

/// Emits a lookup's spans (and the restore's), and `CacheHit` or the
/// warning that made it a miss. `found` is `Err` when the blocking thread
/// itself failed.
fn report_hit(
    id: &str,
    key: &CacheKey,
    looking: Instant,
    found: Result<Found, String>,
    events: &Bus,
) -> Option<CacheOutcome> {
    let found = found.map(|(found, restoring)| {
        match restoring {
            Some(at) => {
                events.emit(Event::Span { task: id, phase: Phase::Lookup, start: looking, end: at });
                events.span(id, Phase::Restore, at);
            }
            None => events.span(id, Phase::Lookup, looking),
        }
        found
    });
    match found {
        Ok(Ok(Some((entry, tier)))) => {
            events.emit(Event::CacheHit { task: id, key: &key.0, tier, log: &entry.log });
            Some(tier)
        }
        Ok(Ok(None)) => None,
        Ok(Err(why)) => {
            events.note(id, &format!("warning: {why}"));
            None
        }
        Err(e) => {
            events.note(id, &format!("warning: cache lookup failed ({e}); running it"));
            None
        }
    }
}
