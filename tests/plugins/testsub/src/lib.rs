//! A subscriber for the host's tests. Its `mode` picks how it misbehaves
//! when the run's last event arrives: `panic`, `spin` (loops forever, so
//! its CPU budget stops it), `alloc` (1 GiB, past its memory limit), `fail`
//! (an error value). Without a mode it logs, at warn level, one line per
//! run with what it counted, so a test sees that it was called.

use serde::Deserialize;
use vx_plugin_sdk::subscriber::{Event, EventKind, Subscriber};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_subscriber, log};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    mode: Option<String>,
}

#[derive(Default)]
struct TestSub {
    calls: u64,
    events: u64,
    finished_tasks: u64,
}

impl Describe for TestSub {
    fn info() -> PluginInfo {
        PluginInfo::new("testsub", env!("CARGO_PKG_VERSION"))
    }
}

impl Subscriber for TestSub {
    type Config = Config;

    fn on_events(&mut self, config: &Config, events: Vec<Event>) -> Result<(), Error> {
        self.calls += 1;
        let mode = config.mode.as_deref().unwrap_or("");
        let mut last = false;
        for event in &events {
            self.events += 1;
            match event.kind {
                EventKind::TaskFinished(_) => self.finished_tasks += 1,
                EventKind::RunFinished(_) => last = true,
                _ => {}
            }
        }
        if !last {
            return Ok(());
        }
        match mode {
            "panic" => panic!("testsub was told to panic"),
            "spin" => hostile::spin(),
            "alloc" => {
                hostile::alloc_gib();
            }
            "fail" => return Err(Error::unavailable("testsub was told to fail")),
            _ => {}
        }
        let (calls, events, tasks) = (self.calls, self.events, self.finished_tasks);
        log::warn(&format!("testsub saw {events} events in {calls} calls, {tasks} task results"));
        Ok(())
    }
}

export_subscriber!(TestSub);
