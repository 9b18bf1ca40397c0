//! `vx worker`: a bot of the Remote Workers API (the protocol BuildGrid
//! hands work out with). It keeps a bot session, takes leases (each holds
//! an `Action`), materialises the action's input root in a fresh directory,
//! runs the command under the guard — its own session and group, the
//! action's timeout, nothing left behind — uploads the outputs and stdout,
//! and completes the lease with the `ActionResult`; the server writes the
//! action cache and answers the client.
//!
//! The session is polled with a short deadline (BuildGrid answers at once
//! then, instead of holding the call open), right after a lease finishes
//! and otherwise every [`POLL`](session::POLL). A lease the server stops
//! listing was cancelled: its group is stopped. SIGINT or SIGTERM stops
//! every running action and hands its lease back (UNAVAILABLE, which the
//! server re-queues) before the worker exits.
//!
//! This is the server side of remote execution, so it lives apart from
//! the client in [`crate::remote`], whose connection, CAS transfers and
//! trees it uses. What it says as it works are `tracing` records with the
//! target `vx worker`, shown as `vx worker: …`.
//!
//! | file | owns |
//! |------|------|
//! | `session` | joining, the poll loop, cancelled leases, handing leases back at the end |
//! | `lease` | one lease: its task, its outcome, its report to the server |
//! | `inputs` | the action and command from the CAS, the input root materialised |
//! | `process` | the command under the guard: environment, timeout, exit code |
//! | `outputs` | the declared outputs and stdout uploaded, the `ActionResult` |
//! | `error` | [`WorkerError`] for the caller, `LeaseError` for a lease's status |

mod error;
mod inputs;
mod lease;
mod outputs;
mod process;
mod session;

pub(crate) use session::{WorkerOptions, run_worker};

/// The `tracing` target of the worker's log lines.
const LOG: &str = "vx worker";
