//! A cache backend for the host's tests: entries are files in the granted
//! directory `dir` (default `store`). `mode = "garbage"` answers `get` with
//! bytes that are no cache entry; `mode = "down"` fails every call as
//! unavailable; `mode = "probe"` makes `get` of a few keys probe the host's
//! instance pool (see [`probe`]).
//!
//! Hostile modes of `get` (the `hostile` crate): `spin`, `alloc` (1 GiB),
//! `recurse`, `flood` (an endless entry), `flood-log`, `not-utf8` (an error
//! value that is not UTF-8), `other-key` (the stored entry of another key),
//! `truncated` (the stored entry, cut short), `escape` (the escape attempts,
//! logged; `port` is the test's listener), `exit` (calls `exit(3)`).

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use vx_plugin_sdk::blob;
use vx_plugin_sdk::cache_backend::{BlobReader, BlobWriter, CacheBackend};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_cache_backend};

/// Export calls made on this instance so far. Each instance has its own
/// linear memory, so the count shows whether vx reused one.
static CALLS: AtomicU64 = AtomicU64::new(0);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    dir: Option<String>,
    mode: Option<String>,
    port: Option<u16>,
}

impl Config {
    fn path(&self, key: &str) -> Result<String, Error> {
        if self.mode.as_deref() == Some("down") {
            return Err(Error::unavailable("testcache is down"));
        }
        if !key.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(Error::failed("bad key"));
        }
        Ok(format!("{}/{key}", self.dir.as_deref().unwrap_or("store")))
    }
}

/// `get` in probe mode: `calls` answers this instance's call count (this
/// call included) as text; `panic` panics; `spin` loops forever; `burn`
/// busy-waits 50 ms of wall time; `grow` keeps 40 MiB more of memory and
/// answers the count. Other keys are a miss.
fn probe(key: &str, sink: &BlobWriter, calls: u64) -> Result<bool, Error> {
    match key {
        "calls" => {}
        "panic" => panic!("testcache was told to panic"),
        "spin" => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "burn" => {
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(50) {
                std::hint::black_box(start);
            }
        }
        "grow" => {
            let kept: &'static mut [u8] = Vec::leak(vec![0u8; 40 << 20]);
            std::hint::black_box(kept);
        }
        _ => return Ok(false),
    }
    blob::Writer::new(sink).write_all(calls.to_string().as_bytes())?;
    Ok(true)
}

/// `get` in a hostile mode; `None` for the modes that are not.
fn hostile_get(config: &Config, mode: &str, key: &str, sink: &BlobWriter) -> Result<Option<bool>, Error> {
    let dir = config.dir.as_deref().unwrap_or("store");
    let stored = |keep: &dyn Fn(&str) -> bool| -> Result<Vec<u8>, Error> {
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if keep(&name) {
                return Ok(std::fs::read(format!("{dir}/{name}"))?);
            }
        }
        Err(Error::failed("nothing stored to misuse"))
    };
    let mut out = blob::Writer::new(sink);
    match mode {
        "spin" => hostile::spin(),
        "alloc" => out.write_all(&hostile::alloc_gib().to_le_bytes())?,
        "recurse" => out.write_all(&hostile::recurse(0).to_le_bytes())?,
        "flood" => {
            // Ignores vx's refusal and keeps writing: vx must stop it.
            let chunk = hostile::big(1 << 20);
            loop {
                let _ = out.write_all(&chunk);
            }
        }
        "flood-log" => hostile::flood_log(300),
        "not-utf8" => return Err(Error::failed(hostile::not_utf8())),
        "other-key" => out.write_all(&stored(&|name| name != key)?)?,
        "truncated" => {
            let entry = stored(&|name| name == key)?;
            out.write_all(&entry[..entry.len() - 10])?;
        }
        "escape" => {
            hostile::log_probe(config.port.unwrap_or(9));
            return Ok(Some(false));
        }
        "exit" => std::process::exit(3),
        _ => return Ok(None),
    }
    Ok(Some(true))
}

struct Testcache;

impl Describe for Testcache {
    fn info() -> PluginInfo {
        PluginInfo::new("testcache", "0.1.0").request("dirs=store")
    }
}

impl CacheBackend for Testcache {
    type Config = Config;

    fn exists(config: &Config, keys: &[String]) -> Result<Vec<bool>, Error> {
        CALLS.fetch_add(1, Ordering::Relaxed);
        keys.iter().map(|k| Ok(std::path::Path::new(&config.path(k)?).exists())).collect()
    }

    fn get(config: &Config, key: &str, sink: &BlobWriter) -> Result<bool, Error> {
        let calls = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
        let path = config.path(key)?;
        match config.mode.as_deref() {
            Some("garbage") => {
                blob::Writer::new(sink).write_all(b"this is not a vx cache entry")?;
                return Ok(true);
            }
            Some("probe") => return probe(key, sink, calls),
            Some(mode) => {
                if let Some(hit) = hostile_get(config, mode, key, sink)? {
                    return Ok(hit);
                }
            }
            None => {}
        }
        let Ok(mut file) = std::fs::File::open(&path) else { return Ok(false) };
        let mut buf = vec![0u8; 64 << 10];
        let mut out = blob::Writer::new(sink);
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                return Ok(true);
            }
            out.write_all(&buf[..n])?;
        }
    }

    fn put(config: &Config, key: &str, _size: u64, source: &BlobReader) -> Result<(), Error> {
        CALLS.fetch_add(1, Ordering::Relaxed);
        let path = config.path(key)?;
        let mut file = std::fs::File::create(&path)?;
        std::io::copy(&mut blob::Reader::new(source), &mut file)?;
        Ok(())
    }
}

export_cache_backend!(Testcache);
