//! The first-party plugins (junit, http-cache, otel, sandbox), built into
//! the `vx` binary: `vx plugin add
//! junit` works by name on a machine with no WebAssembly toolchain and no
//! network, `vx run --report junit` works in a workspace that never added
//! it, and a clone whose `.vx/plugins/` copy is gone still loads a pinned
//! first-party plugin.
//!
//! The bytes are `plugins/dist/*.wasm`, committed and checked in CI to be
//! exactly what `scripts/build-plugins` makes from `plugins/`
//! (`scripts/check-plugins`), so the binary embeds what the source says.
//! The table below says what each one is without loading it; a unit test
//! loads each one and checks the table against the component.

use std::sync::{Arc, OnceLock};

use super::error::PluginError;
use super::grants::{Grants, Limits};
use super::load::{LoadedPlugin, World, load_bytes};
use super::state::PluginContext;

/// One component built into vx.
#[derive(Debug)]
pub(crate) struct FirstParty {
    /// Its name for `vx plugin add NAME` and `--report NAME`.
    pub name: &'static str,
    pub world: World,
    /// One line for `vx plugin list --available`.
    pub summary: &'static str,
    /// The grants it needs to be useful, as `vx plugin add` flags.
    pub grants_hint: &'static str,
    pub bytes: &'static [u8],
}

impl FirstParty {
    /// The BLAKE3 of its bytes, as its pin in `vx.lock` records it.
    pub(crate) fn hash(&self) -> blake3::Hash {
        static HASHES: OnceLock<Vec<blake3::Hash>> = OnceLock::new();
        let hashes = HASHES.get_or_init(|| ALL.iter().map(|p| blake3::hash(p.bytes)).collect());
        let index = ALL.iter().position(|p| p.name == self.name).unwrap_or_default();
        hashes[index]
    }
}

macro_rules! dist {
    ($file:literal) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins/dist/", $file))
    };
}

/// Every first-party plugin, by name.
pub(crate) const ALL: &[FirstParty] = &[
    FirstParty {
        name: "junit",
        world: World::Reporter,
        summary: "JUnit XML report of a run, for CI test tabs (`--report junit`)",
        grants_hint: "",
        bytes: dist!("junit.wasm"),
    },
    FirstParty {
        name: "http-cache",
        world: World::CacheBackend,
        summary: "remote cache over HTTP: Turborepo's API or a plain GET/PUT store",
        grants_hint: "--allow-host https://cache.example.com --env TURBO_TOKEN",
        bytes: dist!("http-cache.wasm"),
    },
    FirstParty {
        name: "otel",
        world: World::Subscriber,
        summary: "OpenTelemetry traces of every run over OTLP/HTTP: a span per task",
        grants_hint: "--allow-host http://127.0.0.1:4318",
        bytes: dist!("otel.wasm"),
    },
    FirstParty {
        name: "sandbox",
        world: World::Executor,
        summary: "runs tasks under bubblewrap, seeing only their declared inputs",
        grants_hint: "--allow-program bwrap",
        bytes: dist!("sandbox.wasm"),
    },
];

impl FirstParty {
    /// Loads it as a workspace that never added it would use it: no grant,
    /// no config, the default limits (`vx run --report junit`).
    pub(crate) fn load(&self) -> Result<LoadedPlugin, PluginError> {
        let ctx = Arc::new(PluginContext {
            name: self.name.to_string(),
            grants: Grants::default(),
            limits: Limits::default(),
            config_json: "{}".to_string(),
        });
        load_bytes(ctx, self.bytes, self.hash())
    }
}

/// The first-party plugin called `name`.
pub(crate) fn by_name(name: &str) -> Option<&'static FirstParty> {
    ALL.iter().find(|p| p.name == name)
}

/// The first-party plugin whose bytes have this BLAKE3 (hex), if any: a
/// pin that names one can be loaded without its file.
pub(crate) fn by_hash(hex: &str) -> Option<&'static FirstParty> {
    ALL.iter().find(|p| p.hash().to_hex().as_str() == hex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::load_bytes_ungranted;

    #[test]
    fn the_table_says_what_each_component_is() {
        for plugin in ALL {
            let loaded = load_bytes_ungranted(plugin.name, plugin.bytes, plugin.hash()).expect("it loads");
            assert_eq!(loaded.world, plugin.world, "{}", plugin.name);
            let info = loaded.info().expect("info");
            assert_eq!(info.name, plugin.name, "its own name is its first-party name");
            assert!(by_hash(plugin.hash().to_hex().as_str()).is_some_and(|p| p.name == plugin.name));
        }
        assert!(by_name("junit").is_some() && by_name("jun").is_none());
        assert!(by_hash(blake3::hash(b"other").to_hex().as_str()).is_none());
    }
}
