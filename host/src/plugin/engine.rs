//! The one wasmtime `Engine` of the process, its epoch ticker, and the
//! on-disk cache of compiled components.
//!
//! Compiled artifacts live in the user's cache dir
//! (`$XDG_CACHE_HOME/vx/wasm`, else `$HOME/.cache/vx/wasm`, mode 0700),
//! named by the component's BLAKE3 and the engine's compatibility hash, so
//! another wasmtime or other codegen settings never load them. Only vx
//! writes them (temp file, then rename); a file that fails to load
//! (truncated, foreign) is compiled again and replaced. A `.cwasm` is never
//! taken from the workspace or a remote: deserializing trusts its input.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

/// How often the epoch advances; CPU budgets and timeouts are checked at
/// this granularity.
pub(crate) const TICK: Duration = Duration::from_millis(10);

/// Why the process's wasm engine could not start.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct EngineError(String);

/// The engine, created on first use with its ticker thread.
pub(crate) fn engine() -> Result<&'static Engine, EngineError> {
    static ENGINE: OnceLock<Result<Engine, EngineError>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut config = Config::new();
            config
                .wasm_component_model(true)
                .epoch_interruption(true)
                .concurrency_support(false)
                .parallel_compilation(true);
            let engine =
                Engine::new(&config).map_err(|e| EngineError(format!("could not start the wasm engine: {e}")))?;
            let weak = engine.weak();
            let ticker = std::thread::Builder::new().name("vx-epoch".into()).spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(TICK);
                }
            });
            ticker.map_err(|e| EngineError(format!("could not start the epoch ticker: {e}")))?;
            Ok(engine)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The directory of compiled components, created private to the user.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("vx").join("wasm"))
}

/// The compiled artifact's file name for these component bytes.
pub(crate) fn artifact_name(engine: &Engine, component_hash: &blake3::Hash) -> String {
    let mut hasher = Blake3Hasher(blake3::Hasher::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let compat = hasher.0.finalize().to_hex();
    format!("{}-{}.cwasm", &component_hash.to_hex()[..32], &compat[..16])
}

/// Feeds `Hash` into BLAKE3, so the key is stable across runs (the std
/// hasher is only stable within one build).
struct Blake3Hasher(blake3::Hasher);

impl Hasher for Blake3Hasher {
    fn finish(&self) -> u64 {
        let bytes = self.0.finalize();
        u64::from_le_bytes(bytes.as_bytes()[..8].try_into().expect("32-byte hash"))
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// How a component was obtained, for `vx plugin list` and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Loaded from the compiled cache.
    Cached,
    /// Compiled now (and written to the cache when it could be).
    Compiled,
}

/// Loads a component: from the compiled cache when it holds a loadable
/// artifact, else by compiling (and caching) it.
pub(super) fn load_component(
    engine: &Engine,
    bytes: &[u8],
    hash: &blake3::Hash,
) -> Result<(Component, Origin), String> {
    let Some(dir) = cache_dir() else { return compile(engine, bytes).map(|c| (c, Origin::Compiled)) };
    let path = dir.join(artifact_name(engine, hash));
    if path.is_file() {
        // SAFETY: the file is in the user's private cache dir and only vx
        // writes it, by renaming a complete `precompile_component` output
        // into place; wasmtime checks its header and compatibility and
        // refuses a truncated or foreign file with an error.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => return Ok((component, Origin::Cached)),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let compiled = engine.precompile_component(bytes).map_err(|e| format!("could not compile it: {e:#}"))?;
    if write_private(&dir, &path, &compiled).is_ok() {
        // SAFETY: as above; the file was written by this process a moment ago.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok((component, Origin::Compiled));
        }
    }
    // SAFETY: the bytes were produced by this engine's `precompile_component`.
    let component = unsafe { Component::deserialize(engine, &compiled) }.map_err(|e| format!("{e:#}"))?;
    Ok((component, Origin::Compiled))
}

fn compile(engine: &Engine, bytes: &[u8]) -> Result<Component, String> {
    Component::new(engine, bytes).map_err(|e| format!("could not compile it: {e:#}"))
}

/// Writes `bytes` to `path` atomically, creating `dir` with mode 0700.
fn write_private(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    let tmp =
        dir.join(format!(".{}.{}.tmp", std::process::id(), path.file_name().unwrap_or_default().to_string_lossy()));
    let mut file = std::fs::File::create(&tmp)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Whether a compiled artifact is cached for these bytes.
pub(crate) fn is_compiled(engine: &Engine, hash: &blake3::Hash) -> bool {
    cache_dir().is_some_and(|d| d.join(artifact_name(engine, hash)).is_file())
}

/// Starts the process's one engine and its epoch ticker, if they are not
/// running yet (the first load does it otherwise). Benchmarks call it to
/// time that one-off start apart from loading plugins.
pub fn start_engine() -> Result<(), EngineError> {
    engine().map(drop)
}

/// The engine, for `vx plugin list` (whether a compiled artifact exists).
pub(crate) fn compiled(hash: &blake3::Hash) -> bool {
    engine().is_ok_and(|e| is_compiled(e, hash))
}
