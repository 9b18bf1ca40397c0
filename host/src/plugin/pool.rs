//! Live plugin instances, reused across the calls of one process
//! (PLUGINS.md §1). Every world's calls borrow an instance from its
//! plugin's pool: `info` and `render` on reporters, `exists`, `get` and
//! `put` on cache backends, `info` and `execute` on executors. A fresh
//! store and instance cost 35–60 µs, most of a short call; a pooled one
//! costs only its limits restarted. (A subscriber's `info` is pooled too;
//! its events go to one instance kept for the run, `subscriber`.)
//!
//! Invariants:
//! - An instance serves one call at a time: it is taken out of the pool for
//!   the call and put back after it. The pool never blocks: when every
//!   instance is out, the call makes a new one, and an instance coming back
//!   to a full pool is dropped. At most [`max_idle`] are kept; none exist
//!   before the first call.
//! - An instance is put back only after a call that returned normally (an
//!   error value of the plugin's own counts as normal). A trap, a panic, a
//!   limit (CPU, call timeout, memory) or a host-side error drops it, since
//!   it may be left half-way through the call. So does an `execute` that
//!   left a child process open: its group dies with the store, as it did
//!   when every call had a store of its own.
//! - Limits apply per call on a reused store: the wall clock, the thread's
//!   CPU time and the epoch deadline start again with each call, and the
//!   per-call output and log buffers are empty. Linear memory only grows,
//!   so the memory limit holds for an instance's lifetime; an instance
//!   using more than half of it after a call is dropped, and the next call
//!   starts afresh.
//! - Everything else in a store comes from the plugin's grants, which are
//!   fixed for the plugin's lifetime, so a reused instance sees what a
//!   fresh one would (environment, preopened dirs, `allow-hosts`, config).
//!   A plugin may keep state in its globals from one call to the next; the
//!   SDK documents that it must not rely on either.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use wasmtime::Store;

use super::bindings::{cache_backend, command, executor, reporter, subscriber};
use super::error::PluginError;
use super::load::{LoadedPlugin, flush_output};
use super::state::State;

/// The most idle instances a plugin keeps: one per core the calls can run
/// on, and a few at most. Computed once: `available_parallelism` reads the
/// cgroup files, which cost more than a pooled call.
pub fn max_idle() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(4))
}

/// An instance's typed exports, whichever world it is.
pub enum Bound {
    Reporter(reporter::Reporter),
    CacheBackend(cache_backend::CacheBackend),
    Executor(executor::Executor),
    Subscriber(subscriber::Subscriber),
    Command(command::Command),
}

impl Bound {
    /// The wrong-world error a typed accessor returns.
    fn not(what: &str) -> wasmtime::Error {
        wasmtime::format_err!("the plugin is not {what}")
    }

    pub fn reporter(&self) -> wasmtime::Result<&reporter::Reporter> {
        match self {
            Bound::Reporter(r) => Ok(r),
            _ => Err(Self::not("a reporter")),
        }
    }

    pub fn cache_backend(&self) -> wasmtime::Result<&cache_backend::CacheBackend> {
        match self {
            Bound::CacheBackend(c) => Ok(c),
            _ => Err(Self::not("a cache backend")),
        }
    }

    pub fn executor(&self) -> wasmtime::Result<&executor::Executor> {
        match self {
            Bound::Executor(e) => Ok(e),
            _ => Err(Self::not("an executor")),
        }
    }

    pub fn command(&self) -> wasmtime::Result<&command::Command> {
        match self {
            Bound::Command(c) => Ok(c),
            _ => Err(Self::not("a command")),
        }
    }
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Bound::Reporter(_) => "Bound::Reporter",
            Bound::CacheBackend(_) => "Bound::CacheBackend",
            Bound::Executor(_) => "Bound::Executor",
            Bound::Subscriber(_) => "Bound::Subscriber",
            Bound::Command(_) => "Bound::Command",
        })
    }
}

/// A live instance with its store, ready for its next call.
struct Pooled {
    store: Store<State>,
    bound: Bound,
}

/// A plugin's idle instances, empty until the first pooled call.
#[derive(Default)]
pub(crate) struct InstancePool {
    idle: Mutex<Vec<Pooled>>,
    created: AtomicUsize,
}

impl std::fmt::Debug for InstancePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstancePool").field("stats", &self.stats()).finish()
    }
}

/// How a pool has been used, for tests and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// Instances waiting for a call now.
    pub idle: usize,
    /// Instances created so far.
    pub created: usize,
}

impl InstancePool {
    pub(crate) fn stats(&self) -> PoolStats {
        PoolStats { idle: self.lock().len(), created: self.created.load(Ordering::Relaxed) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pooled>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self) -> Option<Pooled> {
        self.lock().pop()
    }

    fn give_back(&self, instance: Pooled) {
        let mut idle = self.lock();
        if idle.len() < max_idle() {
            idle.push(instance);
        }
    }
}

impl LoadedPlugin {
    /// Runs `f` (one export call) on an instance from the pool, or a new
    /// one, under this call's limits; the instance goes back to the pool
    /// only if the call returned normally and left it reusable.
    pub(super) fn pooled_call<R>(
        &self,
        call: &str,
        f: impl FnOnce(&Bound, &mut Store<State>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let mut instance = match self.pool.take() {
            Some(mut instance) => {
                instance.store.data_mut().begin_call();
                instance.store.set_epoch_deadline(1);
                instance
            }
            None => {
                let mut store = self.store(call)?;
                let bound = match self.exports().instantiate(&mut store) {
                    Ok(bound) => bound,
                    Err(e) => {
                        flush_output(self.name(), store.data_mut());
                        return Err(self.trap_error(call, store.data(), &e));
                    }
                };
                self.pool.created.fetch_add(1, Ordering::Relaxed);
                Pooled { store, bound }
            }
        };
        let result = f(&instance.bound, &mut instance.store);
        flush_output(self.name(), instance.store.data_mut());
        let state = instance.store.data();
        match result {
            Ok(value) => match self.stop_error(call, state) {
                Some(stopped) => Err(stopped),
                None => {
                    if state.reusable() {
                        self.pool.give_back(instance);
                    }
                    Ok(value)
                }
            },
            Err(e) => Err(self.trap_error(call, state, &e)),
        }
    }

    /// The pool's use so far.
    pub fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::plugin::error::PluginErrorKind;
    use crate::plugin::grants::{DirGrant, Grants, Limits};
    use crate::plugin::load::load_bytes;
    use crate::plugin::state::PluginContext;

    /// tests/plugins/testcache, built by `scripts/build-plugins tests/plugins`.
    fn testcache(limits: Limits, config: &str, grants: Grants) -> LoadedPlugin {
        // One load at a time: the first one writes the compiled component
        // to the user cache, through a temp file named by the process.
        static LOADING: Mutex<()> = Mutex::new(());
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/plugins/dist/testcache.wasm");
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; build it with scripts/build-plugins tests/plugins", path.display()));
        let ctx = Arc::new(PluginContext { name: "tc".into(), grants, limits, config_json: config.into() });
        let _one = LOADING.lock().unwrap_or_else(PoisonError::into_inner);
        load_bytes(ctx, &bytes, blake3::hash(&bytes)).expect("testcache loads")
    }

    /// testcache in probe mode, granted the clocks: `burn` measures its
    /// 50 ms on the monotonic clock.
    fn probe(limits: Limits) -> LoadedPlugin {
        testcache(limits, r#"{"mode":"probe"}"#, Grants { clocks: true, ..Grants::default() })
    }

    /// testcache's answer to `get(key)` in probe mode: the number of calls
    /// its instance has served, this one included.
    fn count(plugin: &LoadedPlugin, key: &str) -> u64 {
        let bytes = plugin.cache_get(key).expect("the call succeeds").expect("a hit");
        String::from_utf8(bytes).expect("text").parse().expect("a number")
    }

    #[test]
    fn calls_reuse_one_instance() {
        let tc = probe(Limits::default());
        assert_eq!(tc.pool_stats(), PoolStats { idle: 0, created: 0 }, "nothing before the first call");
        assert_eq!(count(&tc, "calls"), 1);
        assert_eq!(count(&tc, "calls"), 2);
        assert_eq!(tc.cache_exists(&["a".to_string()]).unwrap(), vec![false]);
        let own = tc.cache_get("not/a/key").unwrap_err();
        assert_eq!(own.kind, PluginErrorKind::Returned, "{own}");
        assert_eq!(count(&tc, "calls"), 5, "the plugin's own error value keeps the instance");
        assert_eq!(tc.pool_stats(), PoolStats { idle: 1, created: 1 });
    }

    #[test]
    fn a_trapping_call_drops_its_instance_and_the_next_call_works() {
        let tc = probe(Limits::default());
        assert_eq!(count(&tc, "calls"), 1);
        assert_eq!(count(&tc, "calls"), 2);
        let trap = tc.cache_get("panic").unwrap_err();
        assert_eq!(trap.kind, PluginErrorKind::Trapped, "{trap}");
        assert!(trap.message.contains("testcache was told to panic"), "{trap}");
        assert_eq!(count(&tc, "calls"), 1, "a new instance");
        assert_eq!(tc.pool_stats(), PoolStats { idle: 1, created: 2 });
    }

    #[test]
    fn the_call_timeout_restarts_per_call_and_still_stops_a_reused_instance() {
        let limits = Limits { call_timeout: Duration::from_millis(250), ..Limits::default() };
        let tc = probe(limits);
        for n in 1..=8 {
            assert_eq!(count(&tc, "burn"), n, "eight 50 ms calls on one instance, 400 ms in all");
        }
        let stopped = tc.cache_get("spin").unwrap_err();
        assert_eq!(stopped.kind, PluginErrorKind::OutOfTime, "{stopped}");
        assert!(stopped.message.contains("call timeout of 250ms"), "{stopped}");
        assert_eq!(count(&tc, "calls"), 1, "the stopped instance was dropped");
    }

    #[test]
    fn without_allow_clocks_the_monotonic_clock_stands_still() {
        // `burn` waits for 50 ms to pass on the monotonic clock: they never
        // do, and the call timeout stops it.
        let limits = Limits { call_timeout: Duration::from_millis(300), ..Limits::default() };
        let tc = testcache(limits, r#"{"mode":"probe"}"#, Grants::default());
        let stopped = tc.cache_get("burn").unwrap_err();
        assert_eq!(stopped.kind, PluginErrorKind::OutOfTime, "{stopped}");
        assert!(stopped.message.contains("call timeout of 300ms"), "{stopped}");
    }

    #[test]
    fn the_cpu_budget_restarts_per_call_and_still_stops_a_reused_instance() {
        let limits = Limits { cpu: Duration::from_millis(150), ..Limits::default() };
        let tc = probe(limits);
        for n in 1..=12 {
            // 600 ms of burning in all: past the budget unless this thread
            // got less than a quarter of a core.
            assert_eq!(count(&tc, "burn"), n, "twelve 50 ms calls on one instance");
        }
        let stopped = tc.cache_get("spin").unwrap_err();
        assert_eq!(stopped.kind, PluginErrorKind::OutOfTime, "{stopped}");
        assert!(stopped.message.contains("CPU budget of 150ms"), "{stopped}");
        assert_eq!(count(&tc, "calls"), 1, "the stopped instance was dropped");
    }

    #[test]
    fn an_instance_past_half_its_memory_limit_is_not_kept() {
        let tc = probe(Limits { memory: 64 << 20, ..Limits::default() });
        assert_eq!(count(&tc, "calls"), 1);
        assert_eq!(count(&tc, "grow"), 2, "40 MiB more, within the 64 MiB limit");
        assert_eq!(count(&tc, "calls"), 1, "a new instance");
        assert_eq!(tc.pool_stats(), PoolStats { idle: 1, created: 2 });
    }

    #[test]
    fn the_memory_limit_still_stops_a_call() {
        let tc = probe(Limits { memory: 32 << 20, ..Limits::default() });
        assert_eq!(count(&tc, "calls"), 1);
        let stopped = tc.cache_get("grow").unwrap_err();
        assert_eq!(stopped.kind, PluginErrorKind::OutOfMemory, "{stopped}");
        assert_eq!(count(&tc, "calls"), 1, "the stopped instance was dropped");
    }

    /// A directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn concurrent_calls_from_several_threads_stream_whole_entries() {
        let dir = TempDir(std::env::temp_dir().join(format!("vx-pool-test-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0).unwrap();
        let grants = Grants {
            dirs: vec![DirGrant { guest: "store".into(), host: dir.0.clone(), rw: true }],
            ..Grants::default()
        };
        let tc = testcache(Limits::default(), "{}", grants);
        let (threads, rounds) = (6, 15);
        std::thread::scope(|s| {
            for t in 0..threads {
                let tc = &tc;
                s.spawn(move || {
                    for i in 0..rounds {
                        let key = format!("t{t}k{i}");
                        // Past 64 KiB, so both streams move it in several chunks.
                        let entry = Arc::new(format!("{key}:").repeat(40_000 + i * 1000).into_bytes());
                        tc.cache_put(&key, entry.clone()).expect("put");
                        let found = tc.cache_exists(&[key.clone(), "absent".into()]).expect("exists");
                        assert_eq!(found, vec![true, false]);
                        let got = tc.cache_get(&key).expect("get").expect("a hit");
                        assert!(got == *entry, "{key}: got {} bytes of {}", got.len(), entry.len());
                    }
                });
            }
        });
        let stats = tc.pool_stats();
        assert!(stats.idle >= 1 && stats.idle <= max_idle(), "{stats:?}");
        assert!(stats.created < threads * rounds * 3, "instances were reused: {stats:?}");
    }
}
