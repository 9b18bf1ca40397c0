//! What a front end may do to a run while it goes on: type into an
//! interactive task and restart a persistent one. The terminal UI holds
//! the [`Controls`]; the local executor registers each interactive task's
//! terminal here while it runs, and the engine takes restart requests from
//! here between the other things it waits for.
//!
//! Events flow one way (engine → subscribers); this is the only path back,
//! and it carries requests, never state: the engine decides what a request
//! does (a restart of a task that is not a running server is a note).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use tokio::sync::mpsc;

/// The requests of one run's front end.
#[derive(Debug)]
pub(crate) struct Controls {
    /// The pty of each interactive task that is running, by task id.
    inputs: Mutex<HashMap<String, std::fs::File>>,
    restart_tx: mpsc::UnboundedSender<String>,
    /// Taken once, by the engine's session.
    restart_rx: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

impl Default for Controls {
    fn default() -> Self {
        let (restart_tx, restart_rx) = mpsc::unbounded_channel();
        Controls { inputs: Mutex::default(), restart_tx, restart_rx: Mutex::new(Some(restart_rx)) }
    }
}

impl Controls {
    /// An interactive task's terminal is open for input.
    pub(crate) fn open_input(&self, task: &str, pty: std::fs::File) {
        self.inputs.lock().expect("inputs lock poisoned").insert(task.to_string(), pty);
    }

    /// The task ended: nothing can be typed into it any more.
    pub(crate) fn close_input(&self, task: &str) {
        self.inputs.lock().expect("inputs lock poisoned").remove(task);
    }

    /// Whether `task` takes input now.
    pub(crate) fn takes_input(&self, task: &str) -> bool {
        self.inputs.lock().expect("inputs lock poisoned").contains_key(task)
    }

    /// Types `bytes` into the task's terminal. An error says why it could
    /// not (the task ended, or it reads nothing and its terminal is full).
    pub(crate) fn type_into(&self, task: &str, bytes: &[u8]) -> Result<(), String> {
        let mut inputs = self.inputs.lock().expect("inputs lock poisoned");
        let Some(pty) = inputs.get_mut(task) else {
            return Err(format!("{task} takes no input (it is not a running interactive task)"));
        };
        pty.write_all(bytes).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => format!("{task} is not reading its input; typed text dropped"),
            _ => format!("could not type into {task}: {e}"),
        })
    }

    /// Asks the engine to restart `task` (a persistent task).
    pub(crate) fn restart(&self, task: &str) {
        // The session is gone only when the run is over; nothing to restart then.
        let _ = self.restart_tx.send(task.to_string());
    }

    /// The engine's end of the restart requests (once).
    pub(crate) fn take_restarts(&self) -> Option<mpsc::UnboundedReceiver<String>> {
        self.restart_rx.lock().expect("restart lock poisoned").take()
    }
}
