//! A guest's stdout or stderr, kept in memory and drained after every call
//! so vx can show it prefixed with the plugin's name.
//!
//! wasmtime-wasi's `MemoryOutputPipe` cannot be emptied, and a guest asks
//! for its stdout stream once per instance: an instance reused from the
//! cache-backend pool would see the buffer fill up across calls. This one
//! is drained by [`CapturedOutput::take`], so every call starts with the
//! full capacity, as in a fresh instance.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime::format_err;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// An in-memory output stream holding up to `capacity` bytes between drains.
#[derive(Debug, Clone)]
pub struct CapturedOutput {
    capacity: usize,
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl CapturedOutput {
    pub fn new(capacity: usize) -> CapturedOutput {
        CapturedOutput { capacity, buffer: Arc::new(Mutex::new(Vec::new())) }
    }

    /// What the guest wrote since the last call, leaving the buffer empty.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.buffer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// Past its capacity a write traps, as with `MemoryOutputPipe`.
#[wasmtime_wasi::async_trait]
impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        let mut buffer = self.lock();
        if bytes.len() > self.capacity.saturating_sub(buffer.len()) {
            return Err(StreamError::Trap(format_err!("the plugin wrote more than {} bytes of output", self.capacity)));
        }
        buffer.extend_from_slice(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        match self.capacity.saturating_sub(self.lock().len()) {
            0 => Err(StreamError::Closed),
            room => Ok(room),
        }
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl AsyncWrite for CapturedOutput {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let mut buffer = self.lock();
        let n = buf.len().min(self.capacity.saturating_sub(buffer.len()));
        buffer.extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_drains_and_restores_the_capacity() {
        let mut out = CapturedOutput::new(4);
        out.write(Bytes::from_static(b"abc")).unwrap();
        assert_eq!(out.check_write().unwrap(), 1);
        assert!(out.write(Bytes::from_static(b"de")).is_err());
        assert_eq!(out.take(), b"abc");
        assert_eq!(out.check_write().unwrap(), 4);
        out.write(Bytes::from_static(b"defg")).unwrap();
        assert!(matches!(out.check_write(), Err(StreamError::Closed)));
        assert_eq!(out.take(), b"defg");
    }
}
