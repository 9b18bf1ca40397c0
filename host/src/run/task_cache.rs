//! The cache's part in one task's lifecycle: computing its key once its
//! dependencies have theirs, looking it up and restoring a hit, and
//! storing a success. A key that cannot be had, a corrupt entry or a
//! refused restore is a note and a miss, never a failed task.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cache::{Cache, CacheKey, KeyManifest, Lookup};
use crate::config::Task;
use crate::events::{Bus, CacheOutcome, Event, Phase};

/// Enough to compute a task's key, look it up and store its result.
#[derive(Debug)]
pub struct CacheJob {
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
}

impl CacheJob {
    /// Computes the key once the dependencies' keys are known; records it
    /// for the dependents. `None` when it cannot be had (a dependency has
    /// none, or an input could not be read), with a note in the latter.
    pub async fn compute_key(&self, node: usize, id: &str, events: &Bus) -> Option<(CacheKey, KeyManifest)> {
        let deps: Option<Vec<(String, CacheKey)>> = {
            let keys = self.keys.lock().expect("keys lock poisoned");
            self.deps.iter().map(|(n, id)| keys[*n].clone().map(|k| (id.clone(), k))).collect()
        };
        let deps = deps?;
        let (cache, root, dir, task, config, owned_id) = (
            self.cache.clone(),
            self.root.clone(),
            self.project_dir.clone(),
            self.task.clone(),
            self.executor_config.clone(),
            id.to_string(),
        );
        let computed =
            tokio::task::spawn_blocking(move || cache.task_key(&root, &dir, &owned_id, &task, &config, &deps)).await;
        match computed {
            Ok(Ok((key, manifest))) => {
                self.keys.lock().expect("keys lock poisoned")[node] = Some(key.clone());
                Some((key, manifest))
            }
            Ok(Err(why)) => {
                events.note(id, &format!("not cached: {why}"));
                None
            }
            Err(e) => {
                events.note(id, &format!("not cached: key computation failed: {e}"));
                None
            }
        }
    }

    /// Looks the key up and restores a hit, emitting `CacheHit`. A corrupt
    /// entry or a refused restore is a warning and a miss. Both steps are
    /// timed where they run and reported as spans once back here.
    pub async fn try_hit(&self, id: &str, key: &CacheKey, events: &Bus) -> Option<CacheOutcome> {
        let (cache, root, dir, task, key_owned) =
            (self.cache.clone(), self.root.clone(), self.project_dir.clone(), self.task.clone(), key.clone());
        let looking = Instant::now();
        let found = tokio::task::spawn_blocking(move || match cache.lookup_tiers(&key_owned) {
            (Lookup::Hit(entry), remote) => {
                let restoring = Instant::now();
                let restored = match cache.restore(&root, &dir, &task, &entry) {
                    Ok(_) => Ok(Some((entry, if remote { CacheOutcome::Remote } else { CacheOutcome::Local }))),
                    Err(why) => Err(format!("could not restore its outputs ({why}); running it")),
                };
                (restored, Some(restoring))
            }
            (Lookup::Miss, _) => (Ok(None), None),
            (Lookup::Corrupt(why), _) => {
                (Err(format!("its cache entry was corrupt ({why}) and is removed; running it")), None)
            }
            (Lookup::Unreadable(why), _) if cache.first_unreadable() => (
                Err(format!(
                    "could not read the cache at {} ({why}); tasks whose entries cannot be read run",
                    cache.store.dir().display()
                )),
                None,
            ),
            (Lookup::Unreadable(_), _) => (Ok(None), None),
        })
        .await;
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

    /// Stores a success; a failure to store is a note, not a failed task.
    pub async fn store(
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
        let saved =
            tokio::task::spawn_blocking(move || cache.save(&key, manifest, (&root, &dir), &task, &log, duration)).await;
        if let Ok(Err(why)) = saved {
            events.note(id, &format!("not cached: {why}"));
        }
    }
}
