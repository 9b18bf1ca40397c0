//! A closed pipe ends vx quietly, as it ends any Unix tool: `vx show |
//! head` must not print a panic and exit 101 when `head` has read enough.
//!
//! vx keeps `SIGPIPE` ignored (Rust's default), because a write to a task's
//! closed stdin or a server's closed socket must be an error vx handles,
//! never a signal that kills it mid-run. So `println!` to a closed stdout
//! panics with std's "failed printing to stdout" message; this hook turns
//! exactly that panic into the exit a shell expects after `SIGPIPE`
//! (128 + 13), with nothing printed. Any other panic reaches the previous
//! hook unchanged. A run's tasks are still stopped: the guard process
//! ends every task group when vx exits, however it exits.

use std::panic::PanicHookInfo;

/// What a shell reports for a process ended by `SIGPIPE`.
const CLOSED_PIPE_EXIT: i32 = 128 + 13;

/// Installs the hook, keeping the previous one for every other panic.
pub(crate) fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_closed_pipe(info) {
            std::process::exit(CLOSED_PIPE_EXIT);
        }
        previous(info);
    }));
}

/// Whether the panic is std's failed print to a standard stream whose
/// reader has gone.
fn is_closed_pipe(info: &PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    text.starts_with("failed printing to std") && text.contains("Broken pipe")
}
