//! Cached tasks in batches. A task whose start is only "lock, key, look
//! up, restore" (a cacheable local task read from the local store) needs
//! no command, no executor and no job of its own until it misses; in a
//! fully cached run that is every task, and preparing, spawning and
//! settling a job for each of them one at a time kept the engine's
//! thread busy for longer than all the hashing. So the engine hands the
//! ready ones to a few blocking threads in batches ([`run`]): each thread
//! begins its tasks in turn and settles the hits itself (their spans,
//! `CacheHit` and `Finished` go on the bus from there), and the engine
//! only marks them done. A task that misses comes back begun (keyed; its
//! lock let go, since a batch begins more tasks than may run and each lock
//! is an open file) and runs the usual way from there, locked again.
//!
//! What stays on the one-job-per-task path: persistent tasks and groups,
//! tasks with a `mutex` (admission decides when they may even restore),
//! other executors than `local`, `--observe`, and every run with a
//! remote tier that is read, whose lookups are network calls made
//! `--concurrency` at a time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::lifecycle::{JobResult, Shared, hit_result};
use super::task_cache::{Begun, CacheJob};
use crate::cache::Cache;
use crate::config::ExecutorName;
use crate::events::{Bus, Event, Phase};

/// One task a batch begins.
#[derive(Debug)]
pub(crate) struct Item {
    node: usize,
    id: String,
    job: Arc<CacheJob>,
}

/// What a batch made of one task.
// Settled is by far the common case: boxing it would cost an allocation
// per hit to save bytes in a short-lived Vec.
#[expect(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Made {
    /// Restored from the cache and settled (its events emitted).
    Settled(JobResult),
    /// Begun without a hit (its lock let go): it runs the usual way from here.
    Begun(usize, Box<Begun>),
    /// Not begun: vx is stopping.
    Left(usize),
}

impl Shared<'_> {
    /// Whether a batch may begin `node` (see the module's documentation
    /// for which may not).
    pub(crate) fn batchable(&self, node: usize) -> bool {
        let Some(cache) = self.cache.as_ref() else { return false };
        if !cache.reads() || cache.remote_reads() || self.opts.observe.is_some() {
            return false;
        }
        let task = self.task(node);
        let executor = super::exec::effective_executor(task, self.opts.executor.as_deref());
        !(task.persistent || task.is_group() || !task.cache || task.mutex.is_some() || !executor.is_local())
    }

    /// A [`Shared::batchable`] node as an item of a batch, with the run's
    /// cache. It runs locally, and the local executor's part of a key is
    /// known without preparing it.
    pub(crate) fn batch_item(&self, cache: &Arc<Cache>, node: usize) -> Item {
        let identity = self.executors.identity(&ExecutorName::Local).unwrap_or_default();
        let job = self.cache_job(cache, node, self.task(node), ExecutorName::Local, identity);
        Item { node, id: self.graph.nodes[node].id.to_string(), job }
    }
}

/// Begins each item in turn on the calling (blocking) thread and settles
/// the hits, as `Job::run` would have; stops beginning once `cancelled`.
pub(crate) fn run(items: Vec<Item>, events: &Bus, cancelled: &AtomicBool) -> Vec<Made> {
    items
        .into_iter()
        .map(|item| {
            if cancelled.load(Ordering::SeqCst) {
                return Made::Left(item.node);
            }
            let begun = item.job.begin_blocking(item.node, &item.id, true);
            settle_hit(&item, begun, events)
        })
        .collect()
}

/// A begun task settled when it was a hit, as `Job::run` settles one;
/// handed back begun, its lock let go, otherwise.
fn settle_hit(item: &Item, mut begun: Begun, events: &Bus) -> Made {
    if !begun.is_hit() {
        begun.release_lock();
        return Made::Begun(item.node, Box::new(begun));
    }
    let id = &item.id;
    // A hit was keyed and looked up, so both are there.
    let keyed = item.job.begun_key(&mut begun, id, events);
    events.span(id, Phase::Hash, begun.began);
    let tier = keyed.as_ref().and_then(|(key, _)| item.job.begun_hit(&mut begun, id, key, events).flatten());
    let (Some((key, manifest)), Some(tier)) = (keyed, tier) else {
        return Made::Begun(item.node, Box::new(begun));
    };
    let result = hit_result(id, begun.began, tier, Some(key.0));
    events.emit(Event::Finished { result: &result });
    // The task's lock (in `begun`) is let go only now that it is settled.
    drop(begun);
    Made::Settled((item.node, result, Some(manifest)))
}
