//! `--cache`: read and write access per tier, `local:rw,remote:r`, or `off`.

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Access {
    pub read: bool,
    pub write: bool,
}

impl Access {
    const RW: Access = Access { read: true, write: true };
    const NONE: Access = Access { read: false, write: false };
}

/// Access to each cache tier for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CacheMode {
    pub local: Access,
    pub remote: Access,
}

impl Default for CacheMode {
    fn default() -> Self {
        CacheMode { local: Access::RW, remote: Access::RW }
    }
}

impl CacheMode {
    /// Parses `--cache`. A tier not named is off: `--cache local:r` means
    /// read the local cache, write nothing, leave the remote alone.
    pub(crate) fn parse(text: &str) -> Result<CacheMode> {
        let bad = |why: String| {
            Error::usage(format!("--cache {why}"))
                .with_hint("write it like `local:rw,remote:r` (tiers local and remote, access r, w or rw) or `off`; see `vx run --help`")
        };
        if text.trim() == "off" {
            return Ok(CacheMode { local: Access::NONE, remote: Access::NONE });
        }
        let mut mode = CacheMode { local: Access::NONE, remote: Access::NONE };
        let mut seen = Vec::new();
        for part in text.split(',') {
            let (tier, access) =
                part.trim().split_once(':').ok_or_else(|| bad(format!("got `{part}`, which has no `:`")))?;
            let access = match access {
                "r" => Access { read: true, write: false },
                "w" => Access { read: false, write: true },
                "rw" | "wr" => Access::RW,
                "off" | "" => Access::NONE,
                other => return Err(bad(format!("got access `{other}` for {tier}, expected r, w, rw or off"))),
            };
            if seen.contains(&tier) {
                return Err(bad(format!("names the tier `{tier}` twice")));
            }
            seen.push(tier);
            match tier {
                "local" => mode.local = access,
                "remote" => mode.remote = access,
                other => return Err(bad(format!("got the unknown tier `{other}`, expected local or remote"))),
            }
        }
        Ok(mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tiers() {
        let m = CacheMode::parse("local:rw,remote:r").unwrap();
        assert_eq!(m.local, Access::RW);
        assert_eq!(m.remote, Access { read: true, write: false });
        assert_eq!(CacheMode::parse("off").unwrap().local, Access::NONE);
        assert_eq!(CacheMode::parse("local:r").unwrap().remote, Access::NONE);
        for bad in ["local", "local:x", "cloud:r", "local:r,local:w", ""] {
            assert!(CacheMode::parse(bad).is_err(), "{bad}");
        }
    }
}
