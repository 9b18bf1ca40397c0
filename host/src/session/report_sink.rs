//! `--report`: the reporter as a consumer of the run's events. It keeps
//! the summary that `RunFinished` carries, and renders it once the run is
//! over and the screen is the user's again (a report on stdout must not
//! be drawn under the terminal UI).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::Error;
use crate::events::{Event, RunSummary, Subscriber};
use crate::plugin::Reporter;
use crate::report::RunInfo;

/// Keeps the run's summary for its reporter.
#[derive(Debug)]
pub(super) struct ReportSink {
    reporter: Reporter,
    file: Option<PathBuf>,
    info: RunInfo,
    /// The recorded invocation's id (history comes first on the bus).
    invocation: Arc<OnceLock<i64>>,
    kept: Mutex<Option<(RunSummary, u8)>>,
}

impl ReportSink {
    pub(super) fn new(
        reporter: Reporter,
        file: Option<PathBuf>,
        info: RunInfo,
        invocation: Arc<OnceLock<i64>>,
    ) -> Self {
        ReportSink { reporter, file, info, invocation, kept: Mutex::new(None) }
    }

    /// Writes the report of the run it saw; nothing when the run never
    /// finished.
    pub(super) fn write(&self) -> Result<(), Error> {
        let Some((summary, exit_code)) = self.kept.lock().expect("report lock").take() else { return Ok(()) };
        let id = self.invocation.get().copied();
        self.reporter.write(&summary, &self.info, id, exit_code, self.file.as_deref())
    }
}

impl Subscriber for ReportSink {
    fn on(&self, event: &Event<'_>) {
        if let Event::RunFinished { summary, interrupted, .. } = event {
            let code = summary.exit_code(*interrupted);
            *self.kept.lock().expect("report lock") = Some(((*summary).clone(), code));
        }
    }
}
