//! A reporter for the host's tests. `[plugins.NAME.config] mode = …`:
//! `list` (default) prints one line per task; `env` prints the variable
//! `var`; `read` prints the file `path`; `write` writes `path`; `fail`
//! returns an error; `log` logs a warning. Hostile modes (the `hostile`
//! crate): `spin`, `alloc` (1 GiB), `recurse`, `flood-log`, `flood-stdout`,
//! `big` (a report of `mib` MiB), `not-utf8` (an error value that is not
//! UTF-8), `not-utf8-log`, `lines` (an error value of many lines with an
//! escape sequence), `probe` (escape attempts; `port` is the test's
//! listener), `exit` (calls `exit(3)`), `panic`.

use serde::Deserialize;
use vx_plugin_sdk::reporter::{Reporter, Run};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_reporter};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    mode: Option<String>,
    var: Option<String>,
    path: Option<String>,
    mib: Option<usize>,
    port: Option<u16>,
}

struct Testkit;

impl Describe for Testkit {
    fn info() -> PluginInfo {
        PluginInfo::new("testkit", "0.1.0").request("env=TESTKIT_SECRET").request("dirs=data")
    }
}

impl Reporter for Testkit {
    type Config = Config;

    fn render(config: &Config, run: &Run) -> Result<Vec<u8>, Error> {
        let out = match config.mode.as_deref().unwrap_or("list") {
            "list" => {
                let mut out = format!("testkit: {} tasks\n", run.tasks.len());
                for t in &run.tasks {
                    let tail = t.log_tail.as_deref().unwrap_or("").replace('\n', "\\n");
                    out.push_str(&format!("{}#{} {:?} {:?} tail={tail}\n", t.project, t.task, t.status, t.cache));
                }
                out
            }
            "spin" => hostile::spin(),
            "alloc" => format!("allocated {}\n", hostile::alloc_gib()),
            "recurse" => format!("recursed {}\n", hostile::recurse(0)),
            "flood-log" => {
                hostile::flood_log(300);
                "flooded\n".to_string()
            }
            "flood-stdout" => hostile::flood_stdout(),
            "big" => return Ok(hostile::big(config.mib.unwrap_or(200) << 20)),
            "not-utf8" => return Err(Error::failed(hostile::not_utf8())),
            "not-utf8-log" => {
                hostile::log_not_utf8();
                "logged\n".to_string()
            }
            "lines" => return Err(Error::failed("first\nvx: error: forged\u{1b}[2J")),
            "probe" => {
                hostile::log_probe(config.port.unwrap_or(9));
                "probed\n".to_string()
            }
            "exit" => std::process::exit(3),
            "panic" => panic!("testkit was told to panic"),
            "env" => {
                let var = config.var.as_deref().unwrap_or("TESTKIT_SECRET");
                format!("env {var}={}\n", std::env::var(var).unwrap_or_else(|_| "<unset>".into()))
            }
            "read" => match std::fs::read_to_string(config.path.as_deref().unwrap_or("data/in.txt")) {
                Ok(text) => format!("read ok: {text}\n"),
                Err(e) => format!("read failed: {e}\n"),
            },
            "write" => match std::fs::write(config.path.as_deref().unwrap_or("data/out.txt"), "written") {
                Ok(()) => "write ok\n".to_string(),
                Err(e) => format!("write failed: {e}\n"),
            },
            "fail" => return Err(Error::failed("testkit was told to fail")),
            "log" => {
                vx_plugin_sdk::log::warn("testkit says hello");
                "logged\n".to_string()
            }
            other => return Err(Error::invalid_config(format!("config.mode: unknown mode `{other}`"))),
        };
        Ok(out.into_bytes())
    }
}

export_reporter!(Testkit);
