//! The signals that stop a run: SIGINT, SIGTERM and SIGHUP, each mapped to
//! the exit code it ends vx with.

use tokio::signal::unix::{SignalKind, signal};

use crate::error::{Error, ErrorKind, Result};

/// The signals that stop a run. SIGHUP is left alone when vx was started
/// with it ignored (`nohup`), so vx keeps that promise to its caller.
#[derive(Debug)]
pub(crate) struct Signals {
    source: Source,
}

#[derive(Debug)]
enum Source {
    Os {
        int: tokio::signal::unix::Signal,
        term: tokio::signal::unix::Signal,
        hup: Option<tokio::signal::unix::Signal>,
    },
    /// Tests only: signals sent through a channel, so a test can interrupt
    /// a run without signalling its own process (other tests share it).
    #[cfg(test)]
    Sent(tokio::sync::mpsc::UnboundedReceiver<ErrorKind>),
}

impl Signals {
    pub(crate) fn install() -> Result<Signals> {
        let make = |kind| signal(kind).map_err(|e| Error::io("install signal handlers", e));
        let hup = if sighup_ignored() { None } else { Some(make(SignalKind::hangup())?) };
        Ok(Signals {
            source: Source::Os { int: make(SignalKind::interrupt())?, term: make(SignalKind::terminate())?, hup },
        })
    }

    /// Signals that arrive when the test sends them.
    #[cfg(test)]
    pub(crate) fn sent() -> (Signals, tokio::sync::mpsc::UnboundedSender<ErrorKind>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Signals { source: Source::Sent(rx) }, tx)
    }

    /// The next signal; the process is marked as stopping
    /// (`sys::request_stop`), so that plugin calls in flight give up.
    pub(crate) async fn recv(&mut self) -> ErrorKind {
        let (int, term, hup) = match &mut self.source {
            Source::Os { int, term, hup } => (int, term, hup),
            #[cfg(test)]
            Source::Sent(rx) => {
                return match rx.recv().await {
                    Some(kind) => kind,
                    None => std::future::pending().await,
                };
            }
        };
        let kind = tokio::select! {
            _ = int.recv() => ErrorKind::Interrupted,
            _ = term.recv() => ErrorKind::Terminated,
            _ = async { match hup { Some(h) => h.recv().await, None => std::future::pending().await } } => ErrorKind::HungUp,
        };
        crate::sys::request_stop();
        kind
    }
}

fn sighup_ignored() -> bool {
    // SAFETY: a null new action only reads the current disposition.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}
