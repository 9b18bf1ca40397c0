//! A cache backend for the host's tests: entries are files in the granted
//! directory `dir` (default `store`). `mode = "garbage"` answers `get` with
//! bytes that are no cache entry; `mode = "down"` fails every call as
//! unavailable.

use std::io::{Read, Write};

use serde::Deserialize;
use vx_plugin_sdk::blob;
use vx_plugin_sdk::cache_backend::{BlobReader, BlobWriter, CacheBackend};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_cache_backend};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    dir: Option<String>,
    mode: Option<String>,
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

struct Testcache;

impl Describe for Testcache {
    fn info() -> PluginInfo {
        PluginInfo::new("testcache", "0.1.0").request("dirs=store")
    }
}

impl CacheBackend for Testcache {
    type Config = Config;

    fn exists(config: &Config, keys: &[String]) -> Result<Vec<bool>, Error> {
        keys.iter().map(|k| Ok(std::path::Path::new(&config.path(k)?).exists())).collect()
    }

    fn get(config: &Config, key: &str, sink: &BlobWriter) -> Result<bool, Error> {
        let path = config.path(key)?;
        if config.mode.as_deref() == Some("garbage") {
            blob::Writer::new(sink).write_all(b"this is not a vx cache entry")?;
            return Ok(true);
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
        let path = config.path(key)?;
        let mut file = std::fs::File::create(&path)?;
        std::io::copy(&mut blob::Reader::new(source), &mut file)?;
        Ok(())
    }
}

export_cache_backend!(Testcache);
