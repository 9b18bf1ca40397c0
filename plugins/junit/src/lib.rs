//! The `junit` reporter: renders a vx run as JUnit XML, which CI systems
//! (GitHub, GitLab, Jenkins, Buildkite) turn into per-task test results.
//!
//! One `testsuite` per project, one `testcase` per task (`classname` =
//! project, `name` = task). Failed and timed-out tasks get a `failure` with
//! the log tail; a flaky one (passed after a failed attempt: `ok` with a
//! message) a `flakyFailure` with the failed attempt's log tail, inside a
//! passing case; skipped and cancelled ones a `skipped`; tasks replayed from
//! a cache carry a `vx.cache` property and a `system-out` note. The rendering
//! is a plain function ([`render::render`]) so it is tested on the host.

mod render;
mod time;
mod xml;

use serde::Deserialize;
use vx_plugin_sdk::reporter::{Reporter, Run};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_reporter};

/// The `[plugins.junit].config` table.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Config {
    /// The `name` of the root `testsuites` element; `vx` when unset.
    pub suite_name: Option<String>,
}

struct Junit;

impl Describe for Junit {
    fn info() -> PluginInfo {
        PluginInfo::new("junit", env!("CARGO_PKG_VERSION")).config_schema(
            r#"{"type":"object","additionalProperties":false,"properties":{"suite-name":{"type":"string"}}}"#,
        )
    }
}

impl Reporter for Junit {
    type Config = Config;

    fn render(config: &Config, run: &Run) -> Result<Vec<u8>, Error> {
        Ok(render::render(config, run).into_bytes())
    }
}

export_reporter!(Junit);
