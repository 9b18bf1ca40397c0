//! Loading a plugin: read its bytes, check its pin, get the compiled
//! component (cache or compile), classify it by its export, link-check it
//! once into an `InstancePre`, and make calls under its limits.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Store, Trap, UpdateDeadline};

use super::bindings::{cache_backend, command, executor, reporter, subscriber};
use super::engine::{Origin, engine, load_component};
use super::error::{PluginError, PluginErrorKind};
use super::first_party;
use super::grants::{Grants, Limits};
use super::lock::read_pin;
use super::pool::{Bound, InstancePool};
use super::state::{LogRecord, PluginContext, State, Stop, mib, thread_cpu};
use super::text::{MAX_MESSAGE, one_line};
use crate::config::PluginSettings;

/// Plugin files larger than this are refused before hashing.
pub(crate) const MAX_PLUGIN_SIZE: u64 = 256 << 20;
/// The export versions this vx loads (wit/README.md, "Compatibility").
pub(crate) const SUPPORTED_EXPORTS: &str = "vx:plugin/{exec,cache,report,subscribe,verb}@0.1.*";

/// The world a plugin implements, known from its one vx export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum World {
    Reporter,
    CacheBackend,
    Executor,
    Subscriber,
    Command,
}

impl World {
    pub fn name(self) -> &'static str {
        match self {
            World::Reporter => "reporter",
            World::CacheBackend => "cache-backend",
            World::Executor => "executor",
            World::Subscriber => "subscriber",
            World::Command => "command",
        }
    }

    fn from_interface(interface: &str) -> Option<World> {
        match interface {
            "vx:plugin/report" => Some(World::Reporter),
            "vx:plugin/cache" => Some(World::CacheBackend),
            "vx:plugin/exec" => Some(World::Executor),
            "vx:plugin/subscribe" => Some(World::Subscriber),
            "vx:plugin/verb" => Some(World::Command),
            _ => None,
        }
    }
}

#[derive(Clone)]
pub(super) enum Pre {
    Reporter(reporter::ReporterPre<State>),
    CacheBackend(cache_backend::CacheBackendPre<State>),
    Executor(executor::ExecutorPre<State>),
    Subscriber(subscriber::SubscriberPre<State>),
    Command(command::CommandPre<State>),
}

/// A plugin ready to be called: compiled, classified and link-checked.
pub struct LoadedPlugin {
    pub ctx: Arc<PluginContext>,
    pub world: World,
    /// The full export name, e.g. `vx:plugin/report@0.1.0`.
    pub export: String,
    pub hash: blake3::Hash,
    pub size: u64,
    pub origin: Origin,
    pre: Pre,
    /// Live instances, reused across calls (`pool`).
    pub(super) pool: InstancePool,
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin").field("name", &self.ctx.name).field("export", &self.export).finish()
    }
}

/// Reads and hashes a plugin file, refusing anything too large, and
/// anything that is not a regular file: `/dev/zero` has no size to check
/// and never ends, and a FIFO would block the read.
pub fn read_plugin_file(name: &str, path: &Path) -> Result<(Vec<u8>, blake3::Hash), PluginError> {
    let meta = std::fs::metadata(path).map_err(|e| PluginError::load(name, format!("{}: {e}", path.display())))?;
    if meta.len() > MAX_PLUGIN_SIZE {
        return Err(PluginError::load(name, format!("{} is larger than {}", path.display(), mib(MAX_PLUGIN_SIZE))));
    }
    let bytes = crate::paths::read_regular(path, MAX_PLUGIN_SIZE).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::InvalidData => format!("is larger than {}", mib(MAX_PLUGIN_SIZE)),
            _ => e.to_string(),
        };
        PluginError::load(name, format!("{}: {why}", path.display()))
    })?;
    let hash = blake3::hash(&bytes);
    Ok((bytes, hash))
}

/// Loads `[plugins.NAME]` of the workspace at `root`, refusing a file that
/// does not match its pin in `vx.lock`. A missing file whose pin names a
/// first-party plugin (a fresh clone, `.vx/` not committed) loads vx's own
/// copy of it: the same bytes, by their hash.
pub(crate) fn load_configured(root: &Path, name: &str, settings: &PluginSettings) -> Result<LoadedPlugin, PluginError> {
    let shown = settings.path.strip_prefix(root).unwrap_or(&settings.path).display().to_string();
    let repin = format!("if the new file is intended, re-pin it with `vx plugin add {shown} --name {name} --force`");
    let pin = read_pin(root, name).map_err(|m| PluginError::load(name, m.to_string()))?;
    let builtin = pin.as_ref().and_then(|p| first_party::by_hash(&p.blake3));
    let (bytes, hash) = match (read_plugin_file(name, &settings.path), builtin) {
        (Ok((bytes, hash)), _) => (Cow::Owned(bytes), hash),
        (Err(_), Some(builtin)) if !settings.path.exists() => (Cow::Borrowed(builtin.bytes), builtin.hash()),
        (Err(e), _) => return Err(e),
    };
    match pin {
        None => return Err(PluginError::load(name, format!("{shown} is not pinned in vx.lock; {repin}"))),
        Some(pin) if pin.blake3 != hash.to_hex().as_str() => {
            return Err(PluginError::load(
                name,
                format!(
                    "{shown} does not match its pin in vx.lock (pinned blake3 {}…, file {}…); it was changed since it was added; {repin}",
                    pin.blake3.get(..12).unwrap_or(&pin.blake3),
                    &hash.to_hex()[..12]
                ),
            ));
        }
        Some(_) => {}
    }
    let (grants, limits) =
        super::grants::read_settings(name, settings, root).map_err(|m| PluginError::load(name, m))?;
    let config_json = toml_to_json(&settings.config);
    let ctx = Arc::new(PluginContext { name: name.to_string(), grants, limits, config_json });
    load_bytes(ctx, &bytes, hash)
}

/// Loads a plugin from bytes with the given grants (`vx plugin add` uses none).
pub(crate) fn load_bytes(
    ctx: Arc<PluginContext>,
    bytes: &[u8],
    hash: blake3::Hash,
) -> Result<LoadedPlugin, PluginError> {
    let name = ctx.name.clone();
    check_component_header(&name, bytes)?;
    let engine = engine().map_err(|m| PluginError::load(&name, m.to_string()))?;
    let (component, origin) = load_component(engine, bytes, &hash).map_err(|m| PluginError::load(&name, m))?;
    let (world, export) = classify(&name, engine, &component)?;
    let link_error = |e: wasmtime::Error| PluginError::load(&name, link_message(world, &e));
    let pre = match world {
        World::Reporter => {
            let pre = reporter_linker().map_err(|m| PluginError::load(&name, m))?.instantiate_pre(&component);
            Pre::Reporter(reporter::ReporterPre::new(pre.map_err(link_error)?).map_err(link_error)?)
        }
        World::CacheBackend => {
            let pre = cache_linker().map_err(|m| PluginError::load(&name, m))?.instantiate_pre(&component);
            Pre::CacheBackend(cache_backend::CacheBackendPre::new(pre.map_err(link_error)?).map_err(link_error)?)
        }
        World::Executor => {
            let pre = executor_linker().map_err(|m| PluginError::load(&name, m))?.instantiate_pre(&component);
            Pre::Executor(executor::ExecutorPre::new(pre.map_err(link_error)?).map_err(link_error)?)
        }
        World::Subscriber => {
            let pre = subscriber_linker().map_err(|m| PluginError::load(&name, m))?.instantiate_pre(&component);
            Pre::Subscriber(subscriber::SubscriberPre::new(pre.map_err(link_error)?).map_err(link_error)?)
        }
        World::Command => {
            let pre = command_linker().map_err(|m| PluginError::load(&name, m))?.instantiate_pre(&component);
            Pre::Command(command::CommandPre::new(pre.map_err(link_error)?).map_err(link_error)?)
        }
    };
    Ok(LoadedPlugin { ctx, world, export, hash, size: bytes.len() as u64, origin, pre, pool: InstancePool::default() })
}

/// A core module is refused with how to make a component of it.
fn check_component_header(name: &str, bytes: &[u8]) -> Result<(), PluginError> {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', 0x0d, 0, 0x01, 0]) => Ok(()),
        Some([0, b'a', b's', b'm', 0x01, 0, 0, 0]) => Err(PluginError::load(
            name,
            "it is a core WebAssembly module, not a component; build it with `--target wasm32-wasip2` \
             (or wrap a wasip1 module with `wasm-tools component new --adapt …reactor.wasm`)",
        )),
        _ => Err(PluginError::load(name, "it is not a WebAssembly file")),
    }
}

/// Finds the one vx export and checks its version.
fn classify(name: &str, engine: &wasmtime::Engine, component: &Component) -> Result<(World, String), PluginError> {
    let ty = component.component_type();
    let mut found = Vec::new();
    for (export, _) in ty.exports(engine) {
        let (interface, version) = export.split_once('@').unwrap_or((export, ""));
        if let Some(world) = World::from_interface(interface) {
            found.push((world, export.to_string(), version.to_string()));
        }
    }
    match found.as_slice() {
        [(world, export, version)] if version.starts_with("0.1.") => Ok((*world, export.clone())),
        [(_, export, _)] => Err(PluginError::load(
            name,
            format!("it exports `{export}`, which this vx does not support; it loads {SUPPORTED_EXPORTS}"),
        )),
        [] => Err(PluginError::load(
            name,
            format!("it exports none of vx's plugin interfaces ({SUPPORTED_EXPORTS}); build it with vx-plugin-sdk"),
        )),
        _ => Err(PluginError::load(
            name,
            "it exports more than one of exec, cache, report, subscribe and verb; a plugin is one kind",
        )),
    }
}

/// "imports `wasi:sockets/tcp`, which vx does not provide" from a link error.
fn link_message(world: World, e: &wasmtime::Error) -> String {
    let text = format!("{e:#}");
    let missing = text.split('`').nth(1).filter(|_| text.contains("matching implementation was not found"));
    match missing {
        Some(import) => format!("it imports `{import}`, which vx does not provide to {} plugins", world.name()),
        None => format!("it does not link as a {} plugin: {}", world.name(), first_line(&text)),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

type LinkerSlot = OnceLock<Result<Linker<State>, String>>;

/// A world's linker, built once per process: the imports every plugin gets,
/// then what `extra` adds for that world.
fn linker(
    slot: &'static LinkerSlot,
    extra: fn(&mut Linker<State>) -> Result<(), String>,
) -> Result<&'static Linker<State>, String> {
    slot.get_or_init(|| {
        let mut linker = Linker::new(engine().map_err(|e| e.to_string())?);
        add_common(&mut linker).map_err(|e| format!("could not link the host: {e}"))?;
        extra(&mut linker)?;
        Ok(linker)
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn add_http(linker: &mut Linker<State>) -> Result<(), String> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_sync(linker).map_err(|e| format!("could not link wasi:http: {e}"))
}

fn reporter_linker() -> Result<&'static Linker<State>, String> {
    static LINKER: LinkerSlot = OnceLock::new();
    linker(&LINKER, |_| Ok(()))
}

fn cache_linker() -> Result<&'static Linker<State>, String> {
    static LINKER: LinkerSlot = OnceLock::new();
    linker(&LINKER, add_http)
}

fn subscriber_linker() -> Result<&'static Linker<State>, String> {
    static LINKER: LinkerSlot = OnceLock::new();
    linker(&LINKER, add_http)
}

fn command_linker() -> Result<&'static Linker<State>, String> {
    static LINKER: LinkerSlot = OnceLock::new();
    linker(&LINKER, |linker| {
        add_http(linker)?;
        command::vx::plugin::workspace::add_to_linker::<State, HasSelf<State>>(linker, |s| s)
            .map_err(|e| format!("could not link vx:plugin/workspace: {e}"))
    })
}

fn executor_linker() -> Result<&'static Linker<State>, String> {
    static LINKER: LinkerSlot = OnceLock::new();
    linker(&LINKER, |linker| {
        add_http(linker)?;
        executor::vx::plugin::process::add_to_linker::<State, HasSelf<State>>(linker, |s| s)
            .map_err(|e| format!("could not link vx:plugin/process: {e}"))
    })
}

fn add_common(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_sync(linker)?;
    reporter::vx::plugin::types::add_to_linker::<State, HasSelf<State>>(linker, |s| s)?;
    reporter::vx::plugin::host::add_to_linker::<State, HasSelf<State>>(linker, |s| s)?;
    Ok(())
}

impl LoadedPlugin {
    pub fn name(&self) -> &str {
        &self.ctx.name
    }

    pub fn limits(&self) -> Limits {
        self.ctx.limits
    }

    pub fn grants(&self) -> &Grants {
        &self.ctx.grants
    }

    /// A fresh store with this plugin's grants and limits, its clock started.
    pub(super) fn store(&self, call: &str) -> Result<Store<State>, PluginError> {
        let engine = engine().map_err(|m| PluginError::load(self.name(), m.to_string()))?;
        let state = State::new(self.ctx.clone(), self.world == World::Command)
            .map_err(|m| PluginError::new(self.name(), call, PluginErrorKind::Load, m))?;
        let mut store = Store::new(engine, state);
        store.limiter(|s| s);
        store.set_epoch_deadline(1);
        // A cache backend's lookup or store gives up on a stop; a reporter
        // and a subscriber still hear how the stopped run ended (their
        // own deadlines bound that), and an executor's call has its task's
        // own cancel.
        let yields_to_stop = matches!(self.world, World::CacheBackend | World::Command);
        store.epoch_deadline_callback(move |mut ctx| {
            let state = ctx.data_mut();
            let limits = state.plugin.limits;
            let cpu = thread_cpu().saturating_sub(state.cpu_at_start);
            let wall = state.call_started.elapsed();
            if matches!(state.stop, Some(Stop::Output { .. })) {
                return Ok(UpdateDeadline::Interrupt);
            }
            // A stopping vx (Ctrl-C, SIGTERM) waits for no call: a cache
            // backend's lookup would otherwise hold it for its whole budget.
            let cancelled =
                state.exec.as_ref().is_some_and(|e| e.control.cancel.load(std::sync::atomic::Ordering::SeqCst));
            if cancelled || (yields_to_stop && crate::sys::stopping()) {
                state.stop = Some(Stop::Cancelled);
                return Ok(UpdateDeadline::Interrupt);
            }
            if cpu > limits.cpu {
                state.stop = Some(Stop::Cpu(limits.cpu));
                return Ok(UpdateDeadline::Interrupt);
            }
            if let Some(limit) = state.wall_limit
                && wall > limit
            {
                state.stop = Some(Stop::WallClock(limit));
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Continue(1))
        });
        store.data_mut().begin_call();
        Ok(store)
    }

    /// The typed entry points, for instantiating into a store.
    pub(super) fn exports(&self) -> Exports<'_> {
        Exports(&self.pre)
    }

    /// Runs `f` (instantiation and one export call) in a fresh store, and
    /// turns a trap or limit into a `PluginError` naming this plugin. vx's
    /// repeated calls borrow pooled instances instead (`pool`); this one
    /// serves a call made once per process (a command plugin's `run`) and
    /// is the benchmarks' measure of what a fresh instance costs.
    pub fn call<R>(
        &self,
        call: &str,
        f: impl FnOnce(&Exports, &mut Store<State>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let mut store = self.store(call)?;
        let result = f(&self.exports(), &mut store);
        flush_output(self.name(), store.data_mut());
        match result {
            Ok(value) => self.stop_error(call, store.data()).map_or(Ok(value), Err),
            Err(e) => Err(self.trap_error(call, store.data(), &e)),
        }
    }

    /// The error of a call that a limit stopped, if one did. A call can
    /// return normally after a limit was hit (an output limit is noticed at
    /// the next epoch tick, or the plugin returns before it), and it fails
    /// all the same: what it handed vx was cut short.
    pub(super) fn stop_error(&self, call: &str, state: &State) -> Option<PluginError> {
        let name = self.name();
        let key = |k: &str| format!("`[plugins.{name}].limits.{k}` in vx.toml");
        let (kind, text) = match state.stop.as_ref()? {
            Stop::Cancelled => (PluginErrorKind::OutOfTime, "stopped with its task".to_string()),
            Stop::Cpu(limit) => (
                PluginErrorKind::OutOfTime,
                format!(
                    "stopped after using its CPU budget of {}; raise {} if it needs more",
                    crate::units::format_duration(*limit),
                    key("cpu")
                ),
            ),
            Stop::WallClock(limit) => (
                PluginErrorKind::OutOfTime,
                format!(
                    "stopped after its call timeout of {}; raise {} if it needs more",
                    crate::units::format_duration(*limit),
                    key("call-timeout")
                ),
            ),
            Stop::Memory { limit, wanted } => (
                PluginErrorKind::OutOfMemory,
                format!(
                    "memory limit {} exceeded (it asked for {} MiB); raise {} if it needs more",
                    mib(*limit),
                    wanted >> 20,
                    key("memory")
                ),
            ),
            Stop::Output { limit, what } => (
                PluginErrorKind::OutOfMemory,
                format!(
                    "stopped after handing vx more than its output limit of {} ({what}); raise {} if it needs more",
                    mib(*limit),
                    key("output")
                ),
            ),
        };
        Some(PluginError::new(name, call, kind, text))
    }

    pub(super) fn trap_error(&self, call: &str, state: &State, e: &wasmtime::Error) -> PluginError {
        let name = self.name();
        if let Some(stopped) = self.stop_error(call, state) {
            return stopped;
        }
        if let Some(panic) = &state.panic {
            return PluginError::new(name, call, PluginErrorKind::Trapped, one_line(panic, MAX_MESSAGE));
        }
        // A guest's `exit` reaches vx as an error whose context is a wasm
        // backtrace, and whose first line says nothing: name the exit.
        if let Some(exit) = e.downcast_ref::<wasmtime_wasi::I32Exit>() {
            let text = format!("it called exit({}); a plugin returns from its call instead", exit.0);
            return PluginError::new(name, call, PluginErrorKind::Trapped, text);
        }
        let text = match e.downcast_ref::<Trap>() {
            Some(trap) => format!("it trapped: {trap}"),
            None => one_line(first_line(&e.root_cause().to_string()), MAX_MESSAGE),
        };
        PluginError::new(name, call, PluginErrorKind::Trapped, text)
    }
}

/// The typed entry points, lent to a call's closure.
pub struct Exports<'a>(&'a Pre);

impl std::fmt::Debug for Exports<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pre")
    }
}

impl Exports<'_> {
    /// A new instance of the plugin in `store`, typed by its world.
    pub fn instantiate(&self, store: &mut Store<State>) -> wasmtime::Result<Bound> {
        Ok(match self.0 {
            Pre::Reporter(pre) => Bound::Reporter(pre.instantiate(store)?),
            Pre::CacheBackend(pre) => Bound::CacheBackend(pre.instantiate(store)?),
            Pre::Executor(pre) => Bound::Executor(pre.instantiate(store)?),
            Pre::Subscriber(pre) => Bound::Subscriber(pre.instantiate(store)?),
            Pre::Command(pre) => Bound::Command(pre.instantiate(store)?),
        })
    }
}

/// A line of a plugin's output or log is cut to this many characters.
const MAX_LINE: usize = 4000;

/// Shows what the plugin printed and logged during a call, each line
/// prefixed with its name and made printable (`text`). Info and below only
/// with `VX_PLUGIN_LOG=1`.
pub(super) fn flush_output(name: &str, state: &mut State) {
    static VERBOSE: OnceLock<bool> = OnceLock::new();
    let verbose = *VERBOSE.get_or_init(|| std::env::var_os("VX_PLUGIN_LOG").is_some_and(|v| v == "1"));
    let mut out = String::new();
    for stream in [state.stdout.take(), state.stderr.take()] {
        for line in String::from_utf8_lossy(&stream).lines() {
            out.push_str(&format!("vx: plugin `{name}`: {}\n", one_line(line, MAX_LINE)));
        }
    }
    for LogRecord { level, message, fields } in state.logs.drain(..) {
        use super::bindings::Level;
        let shown = matches!(level, Level::Warn | Level::Error) || verbose;
        if shown {
            let level = match level {
                Level::Trace => "trace",
                Level::Debug => "debug",
                Level::Info => "info",
                Level::Warn => "warn",
                Level::Error => "error",
            };
            let fields: String =
                fields.iter().map(|(k, v)| format!(" {}={}", one_line(k, MAX_LINE), one_line(v, MAX_LINE))).collect();
            out.push_str(&format!("vx: plugin `{name}` {level}: {}{fields}\n", one_line(&message, MAX_LINE)));
        }
    }
    if state.dropped_logs > 0 {
        out.push_str(&format!("vx: plugin `{name}`: {} more log records dropped\n", state.dropped_logs));
    }
    if !out.is_empty() {
        eprint!("{out}");
    }
}

/// `[plugins.NAME].config` as the JSON the plugin reads through `host.config`.
pub(crate) fn toml_to_json(table: &toml::Table) -> String {
    fn convert(v: &toml::Value) -> serde_json::Value {
        match v {
            toml::Value::String(s) => serde_json::Value::String(s.clone()),
            toml::Value::Integer(i) => serde_json::Value::from(*i),
            toml::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into),
            toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
            toml::Value::Datetime(d) => serde_json::Value::String(d.to_string()),
            toml::Value::Array(a) => serde_json::Value::Array(a.iter().map(convert).collect()),
            toml::Value::Table(t) => {
                serde_json::Value::Object(t.iter().map(|(k, v)| (k.clone(), convert(v))).collect())
            }
        }
    }
    convert(&toml::Value::Table(table.clone())).to_string()
}

/// Loads a plugin with no grants and default limits (`vx plugin add`).
pub fn load_bytes_ungranted(name: &str, bytes: &[u8], hash: blake3::Hash) -> Result<LoadedPlugin, PluginError> {
    let ctx = Arc::new(PluginContext {
        name: name.to_string(),
        grants: Grants::default(),
        limits: Limits {
            cpu: std::time::Duration::from_secs(2),
            call_timeout: std::time::Duration::from_secs(2),
            ..Limits::default()
        },
        config_json: "{}".to_string(),
    });
    load_bytes(ctx, bytes, hash)
}

/// Loads a plugin with no grants, default limits and `config_json` as its
/// `[plugins.NAME].config` (benchmarks and tests).
pub fn load_bytes_with_config(
    name: &str,
    bytes: &[u8],
    hash: blake3::Hash,
    config_json: &str,
) -> Result<LoadedPlugin, PluginError> {
    let ctx = Arc::new(PluginContext {
        name: name.to_string(),
        grants: Grants::default(),
        limits: Limits::default(),
        config_json: config_json.to_string(),
    });
    load_bytes(ctx, bytes, hash)
}
