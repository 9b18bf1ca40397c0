//! `vx plugin new KIND NAME`: has `plugin::scaffold` write the crate and
//! says how to build and add it. KIND is a plugin world.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use clap::builder::PossibleValue;

use super::choice::Choice;
use crate::error::{Error, Result};
use crate::plugin::World;

impl Choice for World {
    const WANTS: &'static str = "reporter, cache-backend, executor, subscriber or command";

    fn refuse(_flag: &str, got: &str, _command: &str) -> Error {
        Error::usage(format!("unknown plugin kind `{got}`"))
            .with_hint("the kinds are reporter, cache-backend, executor, subscriber and command")
    }
}

impl ValueEnum for World {
    fn value_variants<'a>() -> &'a [Self] {
        &[World::Reporter, World::CacheBackend, World::Executor, World::Subscriber, World::Command]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

pub(crate) fn cmd_new(kind: World, name: &str, dir: Option<PathBuf>, cwd: &Path) -> Result<u8> {
    let dest = cwd.join(dir.unwrap_or_else(|| PathBuf::from(name)));
    let ident = crate::plugin::scaffold(kind, name, &dest)?;
    println!("created {} plugin `{name}` in {}", kind.name(), dest.strip_prefix(cwd).unwrap_or(&dest).display());
    println!("build it:  cargo build --release --target wasm32-wasip2   (see its README.md)");
    println!("add it:    vx plugin add target/wasm32-wasip2/release/{ident}.wasm --name {name}");
    Ok(0)
}
