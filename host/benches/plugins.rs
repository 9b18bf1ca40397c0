//! The plugin platform against its targets (issue 5, "Performance"), in
//! process, with plain `Instant` loops: warm-up, then the median of ROUNDS
//! rounds.
//!
//! - **warm start**: loading the three first-party plugins (junit, http-cache,
//!   sandbox) from the compiled cache: read and hash the file, deserialize
//!   the compiled component, classify it, link it into an `InstancePre`.
//!   Measured twice: in this process with the engine already running, and
//!   in fresh processes (this binary re-run with `--first-load`), where it
//!   also pays for starting the engine and building the linkers. Target
//!   ≤ 5 ms for the three.
//! - **per call**: `info` on each plugin, in batches, as vx makes it: on an
//!   instance borrowed from the plugin's pool, its limits restarted. For
//!   junit, the same call without the pool, step by step (a fresh `Store`
//!   with its WASI context, a fresh instance from the `InstancePre`, the
//!   call). Target ≤ 10 µs.
//! - **per call, cache backend and executor**: `exists` of one key and
//!   `get` (a miss) on the test cache backend, beside the same `exists` on
//!   a fresh store and instance; `execute` on the test executor in a mode
//!   that starts no process.
//! - **render**: junit rendering a 1,000-task run (the built-in markdown
//!   reporter beside it for scale). Target ≤ 5 ms.
//!
//! Run with `cargo bench -p vx --bench plugins` after `scripts/build-plugins`
//! and `scripts/build-plugins tests/plugins`. `VX_BENCH_ROUNDS` (default 21)
//! and `VX_BENCH_PROCESSES` (default 15) adjust it. Compiled components
//! live in the user's cache dir, as for vx itself; the first load compiles
//! them if they are not there yet.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use vx::bench::{
    CacheOutcome, ExecContext, ExecControl, ExecTask, Groups, LoadedPlugin, Origin, RunReport, RunSummary, TaskResult,
    TaskStatus, load_bytes_ungranted, load_bytes_with_config, read_plugin_file, start_engine,
};

/// The first-party plugins a warm start loads: a reporter, a cache backend
/// and an executor.
const THREE: [&str; 3] = ["junit", "http-cache", "sandbox"];
/// Calls per round when timing one call.
const BATCH: usize = 200;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--first-load") {
        return first_load(&args[1..]);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let Some(paths) = components(&root) else { return ExitCode::from(2) };
    match run(&paths) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("plugins bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The built components, or `None` (with what to run) if any is missing.
fn components(root: &Path) -> Option<Vec<(&'static str, PathBuf)>> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let wanted = THREE.iter().map(|n| ("plugins/dist", *n)).chain([
        ("tests/plugins/dist", "testkit"),
        ("tests/plugins/dist", "testcache"),
        ("tests/plugins/dist", "testexec"),
    ]);
    for (dir, name) in wanted {
        let path = root.join(dir).join(format!("{name}.wasm"));
        match path.is_file() {
            true => found.push((name, path)),
            false => missing.push(format!("{dir}/{name}.wasm")),
        }
    }
    if missing.is_empty() {
        return Some(found);
    }
    eprintln!("plugins bench: missing {}", missing.join(", "));
    eprintln!(
        "build them first: scripts/build-plugins && scripts/build-plugins tests/plugins (or run bench/plugins.sh)"
    );
    None
}

fn rounds(var: &str, default: usize) -> usize {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

fn load(name: &str, path: &Path) -> Result<LoadedPlugin, String> {
    let (bytes, hash) = read_plugin_file(name, path).map_err(|e| e.to_string())?;
    load_bytes_ungranted(name, &bytes, hash).map_err(|e| e.to_string())
}

/// Times `f` over `warmup` + `n` rounds; each round runs it `batch` times.
/// Returns the per-run median, minimum and maximum of the timed rounds.
fn measure(warmup: usize, n: usize, batch: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<Stats, String> {
    for _ in 0..warmup * batch {
        f()?;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        for _ in 0..batch {
            f()?;
        }
        samples.push(start.elapsed() / batch as u32);
    }
    Ok(Stats::of(samples))
}

#[derive(Debug, Clone, Copy)]
struct Stats {
    median: Duration,
    min: Duration,
    max: Duration,
}

impl Stats {
    fn of(mut samples: Vec<Duration>) -> Stats {
        samples.sort();
        Stats { median: samples[samples.len() / 2], min: samples[0], max: samples[samples.len() - 1] }
    }

    fn show(&self, unit: Unit) -> String {
        format!("{} (min {}, max {})", unit.show(self.median), unit.show(self.min), unit.show(self.max))
    }
}

#[derive(Debug, Clone, Copy)]
enum Unit {
    Micros,
    Millis,
}

impl Unit {
    fn show(self, d: Duration) -> String {
        match self {
            Unit::Micros => format!("{:.1} µs", d.as_secs_f64() * 1e6),
            Unit::Millis => format!("{:.2} ms", d.as_secs_f64() * 1e3),
        }
    }
}

fn verdict(median: Duration, target: Duration) -> String {
    let ratio = median.as_secs_f64() / target.as_secs_f64();
    match ratio <= 1.0 {
        true => format!("met (target ≤ {:?})", target),
        false => format!("MISSED by {ratio:.1}× (target ≤ {:?})", target),
    }
}

fn run(paths: &[(&'static str, PathBuf)]) -> Result<(), String> {
    let n = rounds("VX_BENCH_ROUNDS", 21);
    let processes = rounds("VX_BENCH_PROCESSES", 15);
    let three: Vec<&(&str, PathBuf)> = paths.iter().filter(|(name, _)| THREE.contains(name)).collect();
    println!(
        "plugins bench: median of {n} rounds; {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    // The first load compiles a component that is not in the cache yet.
    let start = Instant::now();
    start_engine().map_err(|e| e.to_string())?;
    println!("engine start (first in this process): {}", Unit::Millis.show(start.elapsed()));
    let plugins = first_loads(paths)?;

    println!("\n== (a) warm start: junit + http-cache + sandbox from the compiled cache");
    let warm = measure(2, n, 1, || {
        for (name, path) in &three {
            let plugin = load(name, path)?;
            if plugin.origin != Origin::Cached {
                return Err(format!("{name} was compiled again: is the user cache dir writable?"));
            }
            black_box(plugin);
        }
        Ok(())
    })?;
    println!("in process, engine running: {}  {}", warm.show(Unit::Millis), verdict(warm.median, ms(5)));
    for (name, path) in &three {
        let one = measure(2, n, 1, || load(name, path).map(drop))?;
        println!("  {name}: {}", one.show(Unit::Millis));
    }
    let fresh = fresh_processes(processes, &three)?;
    println!(
        "fresh process (engine start + linkers + three loads, {processes} processes): {}  {}",
        fresh.show(Unit::Millis),
        verdict(fresh.median, ms(5))
    );

    println!("\n== (b) per call: `info` on a pooled instance, as vx calls it ({BATCH} calls a round)");
    for plugin in &plugins {
        let stats = measure(1, n, BATCH, || plugin.info().map(drop).map_err(|e| e.to_string()))?;
        println!("{:<10} {}  {}", plugin.name(), stats.show(Unit::Micros), verdict(stats.median, us(10)));
    }
    let junit = plugins.iter().find(|p| p.name() == "junit").ok_or("junit not loaded")?;
    let store = measure(1, n, BATCH, || junit.call("bench", |_, _| Ok(())).map_err(|e| e.to_string()))?;
    let instance = measure(1, n, BATCH, || {
        junit.call("bench", |exports, store| exports.instantiate(store).map(drop)).map_err(|e| e.to_string())
    })?;
    let fresh_info = measure(1, n, BATCH, || {
        junit
            .call("bench", |exports, store| {
                exports.instantiate(store)?.reporter()?.vx_plugin_report().call_info(&mut *store).map(drop)
            })
            .map_err(|e| e.to_string())
    })?;
    println!("junit `info` without the pool, step by step (median per call):");
    println!("  fresh store (WASI context, limits, clocks):   {}", Unit::Micros.show(store.median));
    println!("  + instantiate from the InstancePre:         {}", Unit::Micros.show(instance.median));
    println!("  + the `info` call:                          {}", Unit::Micros.show(fresh_info.median));

    pooled_calls(&plugins, n)?;

    render_run(junit, n)
}

/// Loads each plugin once, saying whether it was compiled or came from the
/// compiled cache.
fn first_loads(paths: &[(&'static str, PathBuf)]) -> Result<Vec<LoadedPlugin>, String> {
    let mut plugins = Vec::new();
    for (name, path) in paths {
        let start = Instant::now();
        let plugin = load(name, path)?;
        let took = start.elapsed();
        let how = match plugin.origin {
            Origin::Cached => "compiled cache hit",
            Origin::Compiled => "compiled now, cached",
        };
        println!("first load of {name} ({} KiB): {} ({how})", plugin.size >> 10, Unit::Millis.show(took));
        plugins.push(plugin);
    }

    Ok(plugins)
}

/// (c): a 1,000-task run rendered by the junit plugin, an empty run, and
/// the built-in markdown reporter for scale.
fn render_run(junit: &LoadedPlugin, n: usize) -> Result<(), String> {
    println!("\n== (c) render a 1,000-task run");
    let summary = run_of(1000);
    let argv = vec!["vx".to_string(), "run".to_string(), "build".to_string()];
    let tags = Vec::new();
    let report = RunReport { argv: &argv, started_unix_ms: 1_764_460_800_000, tags: &tags, summary: &summary };
    let bytes = junit.render(&report).map_err(|e| e.to_string())?;
    let render = measure(2, n, 1, || junit.render(&report).map(|b| drop(black_box(b))).map_err(|e| e.to_string()))?;
    println!(
        "junit ({} KiB of XML): {}  {}",
        bytes.len() >> 10,
        render.show(Unit::Millis),
        verdict(render.median, ms(5))
    );
    let empty = RunSummary { results: Vec::new(), wall: Duration::from_secs(1) };
    let empty = RunReport { summary: &empty, ..report };
    let fixed = measure(2, n, 1, || junit.render(&empty).map(drop).map_err(|e| e.to_string()))?;
    println!("junit, an empty run (the fixed part): {}", fixed.show(Unit::Millis));
    let markdown = measure(2, n, 1, || {
        black_box(vx::bench::render_markdown(&summary, &argv));
        Ok(())
    })?;
    println!("built-in markdown, for scale: {}", markdown.show(Unit::Millis));
    Ok(())
}

/// (b) continued: a cache backend's calls, on a pooled instance and, for
/// comparison, on a fresh one.
fn pooled_calls(plugins: &[LoadedPlugin], n: usize) -> Result<(), String> {
    let tc = plugins.iter().find(|p| p.name() == "testcache").ok_or("testcache not loaded")?;
    let keys = vec!["k".to_string()];
    println!("\n== (b) per call, cache backend: testcache, `exists` of one key ({BATCH} calls a round)");
    let fresh = measure(1, n, BATCH, || {
        tc.call("exists", |exports, store| {
            exports.instantiate(store)?.cache_backend()?.vx_plugin_cache().call_exists(&mut *store, &keys)
        })
        .map(drop)
        .map_err(|e| e.to_string())
    })?;
    println!("fresh store + instance per call:  {}  {}", fresh.show(Unit::Micros), verdict(fresh.median, us(10)));
    let pooled = measure(1, n, BATCH, || tc.cache_exists(&keys).map(drop).map_err(|e| e.to_string()))?;
    println!("pooled instance (what vx does):   {}  {}", pooled.show(Unit::Micros), verdict(pooled.median, us(10)));
    let get = measure(1, n, BATCH, || tc.cache_get("k").map(drop).map_err(|e| e.to_string()))?;
    println!("pooled `get`, a miss (blob sink): {}  {}", get.show(Unit::Micros), verdict(get.median, us(10)));
    let stats = tc.pool_stats();
    println!(
        "instances created for {} pooled calls: {} (pool size {})",
        2 * (n + 1) * BATCH,
        stats.created,
        vx::bench::pool_size()
    );
    executor_calls(n)
}

/// (b) continued: an executor's `execute` with no process (testexec's
/// `exit-code` mode), on a pooled instance: the call's own cost, which a
/// task that runs for milliseconds never notices.
fn executor_calls(n: usize) -> Result<(), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/plugins/dist/testexec.wasm");
    let (bytes, hash) = read_plugin_file("testexec", &path).map_err(|e| e.to_string())?;
    let te = load_bytes_with_config("testexec", &bytes, hash, r#"{"mode":"exit-code","code":0}"#)
        .map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread().build().map_err(|e| e.to_string())?;
    let task = ExecTask {
        id: "app#build".into(),
        argv: vec!["true".into()],
        env: Vec::new(),
        cwd: ".".into(),
        timeout_ms: None,
        options: "{}".into(),
    };
    let root = std::env::temp_dir();
    let ctx = || ExecContext {
        root: root.clone(),
        task_dir: root.clone(),
        env: Vec::new(),
        path: std::ffi::OsString::new(),
        groups: Groups::new(),
        control: ExecControl::default(),
        runtime: runtime.handle().clone(),
    };
    println!("\n== (b) per call, executor: testexec `execute` with no process ({BATCH} calls a round)");
    let execute =
        measure(1, n, BATCH, || te.execute(&task, ctx(), Box::new(|_, _| {})).map(drop).map_err(|e| e.to_string()))?;
    println!("pooled instance (what vx does):   {}  {}", execute.show(Unit::Micros), verdict(execute.median, us(10)));
    println!("instances created: {}", te.pool_stats().created);
    Ok(())
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// Re-runs this binary with `--first-load`, one process per sample.
fn fresh_processes(n: usize, three: &[&(&str, PathBuf)]) -> Result<Stats, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + 1 {
        #[expect(clippy::disallowed_methods, reason = "the bench re-runs itself for each sample, outside any task")]
        let mut cmd = Command::new(&exe);
        cmd.arg("--first-load");
        for (name, path) in three {
            cmd.arg(name).arg(path);
        }
        let out = cmd.output().map_err(|e| format!("run {}: {e}", exe.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let nanos = text
            .lines()
            .find_map(|l| l.strip_prefix("first-load-ns "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("--first-load failed: {}", String::from_utf8_lossy(&out.stderr).trim()))?;
        // The first process warms the page cache; it is not counted.
        if i > 0 {
            samples.push(Duration::from_nanos(nanos));
        }
    }
    Ok(Stats::of(samples))
}

/// Child mode: `--first-load NAME PATH …`, timing the engine's start and
/// each load as a fresh `vx` invocation would pay them.
fn first_load(args: &[String]) -> ExitCode {
    let start = Instant::now();
    let loaded = start_engine().map_err(|e| e.to_string()).and_then(|()| {
        args.chunks(2).try_for_each(|pair| match pair {
            [name, path] => load(name, Path::new(path)).map(drop),
            _ => Err("--first-load takes NAME PATH pairs".to_string()),
        })
    });
    match loaded {
        Ok(()) => {
            println!("first-load-ns {}", start.elapsed().as_nanos());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// A finished run of `n` tasks over `n / 4` projects: mostly successes
/// restored from the local cache, some that ran, a few failures with a log
/// tail, and skips behind them.
fn run_of(n: usize) -> RunSummary {
    let tasks = ["build", "test", "lint", "typecheck"];
    let results = (0..n)
        .map(|i| {
            let id = format!("@bench/project-{:04}#{}", i / tasks.len(), tasks[i % tasks.len()]);
            let (status, cache, exit_code, log_tail) = match i % 50 {
                0 => (
                    TaskStatus::Failed("exit code 1".to_string()),
                    CacheOutcome::Miss,
                    Some(1),
                    Some("src/index.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.\n<>&\"' escaped\n".repeat(3)),
                ),
                1 => (TaskStatus::Skipped("a dependency failed".to_string()), CacheOutcome::Uncached, None, None),
                2..=9 => (TaskStatus::Succeeded, CacheOutcome::Miss, Some(0), None),
                _ => (TaskStatus::Succeeded, CacheOutcome::Local, Some(0), None),
            };
            TaskResult {
                id,
                status,
                duration: Duration::from_millis(40 + (i as u64 * 37) % 900),
                cache,
                key: Some(format!("{:064x}", i)),
                exit_code,
                log_tail,
                attempts: 1,
                failed_attempt: None,
                started: None,
                usage: None,
            }
        })
        .collect();
    RunSummary { results, wall: Duration::from_secs(42) }
}
