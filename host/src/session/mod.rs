//! A run session's consumers: everything that shows, keeps or reports a
//! run's events, built in one place for `vx run`, each cycle of `vx watch`
//! and the runs of `--verify`.
//!
//! | file | owns |
//! |------|------|
//! | `options` | what a command asks of its consumers ([`SessionOptions`]) |
//! | `front` | the terminal a run is shown on: the stream, or the terminal UI |
//! | `consumers` | the consumers in the order their dependencies need, and the bus |
//! | `report_sink` | `--report`: a consumer that keeps the run's summary for its reporter |
//! | `relay` | `vx watch`: a fresh set of consumers for every cycle on one bus |
//! | `finish` | after the run: the screen given back, files said, reports written, the exit code |

mod consumers;
mod finish;
mod front;
mod options;
mod relay;
mod report_sink;

pub(crate) use consumers::RunSession;
pub(crate) use front::Front;
pub(crate) use options::{FrontKind, SessionOptions, caller_dir};
pub(crate) use relay::CycleRelay;
