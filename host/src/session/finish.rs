//! After the run: the terminal given back (the terminal UI closes and the
//! summary the stream would have printed is printed), the subscriber
//! plugins drained, where `--summarize` and `--profile` wrote said, and
//! the report written. The run's own exit code decides first; a file that
//! could not be written makes an exit code of 1 out of a 0.

use std::path::Path;

use super::consumers::RunSession;
use super::front::Front;
use crate::run::RunOutcome;

impl RunSession {
    /// Finishes the consumers of the run that ended with `outcome`; the
    /// exit code of the whole command. `details` prints `--summary`'s list
    /// after the terminal UI's summary.
    pub(crate) fn finish(&self, outcome: &RunOutcome, details: bool) -> u8 {
        if let Some(Front::Tui(tui)) = &self.front {
            // The screen is the user's again: the summary the stream prints.
            tui.close();
            let style = crate::report::Style { enabled: self.color };
            print!("{}", outcome.summary.render(style));
            if let Some(hint) = outcome.summary.log_hint(style).filter(|_| self.log_hint) {
                print!("{hint}");
            }
            if details {
                print!("{}", outcome.summary.render_details());
            }
        }
        if let Some(plugins) = &self.plugins {
            plugins.finish();
        }
        let mut code = outcome.exit_code();
        if let Some(file) = &self.summary_file {
            code = code.max(say_written("summarize", &file.written, &self.cwd));
        }
        if let Some(file) = &self.profile {
            code = code.max(say_written("profile", &file.written, &self.cwd));
        }
        code
    }

    /// Writes `--report`'s report, once whatever follows the run (the
    /// checks of `--verify`) has passed; the exit code `code` becomes.
    pub(crate) fn write_report(&self, code: u8) -> u8 {
        let Some(report) = &self.report else { return code };
        match report.write() {
            Ok(()) => code,
            Err(e) => {
                // The run is over: its own failure decides the exit code first.
                eprintln!("vx: error: {e}");
                if code == 0 { e.exit_code() } else { code }
            }
        }
    }
}

/// Says where `--summarize` or `--profile` wrote its file; a file that
/// could not be written is an error line and exit code 1 (the run's own
/// failure, if any, still decides first).
fn say_written(what: &str, written: &crate::report::Written, cwd: &Path) -> u8 {
    match written.wait() {
        Some(Ok(path)) => {
            let shown = path.strip_prefix(cwd).unwrap_or(&path);
            eprintln!("vx: --{what} wrote {}", shown.display());
            0
        }
        Some(Err(why)) => {
            eprintln!("vx: error: --{what}: {why}; give a path vx can write: --{what}=FILE");
            1
        }
        None => 0,
    }
}
