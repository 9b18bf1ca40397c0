//! The `rst-stream` fault: a real HTTP/2 `RST_STREAM` in the middle of a
//! ByteStream read, as a proxy or a server dying mid-transfer sends it.
//!
//! A gRPC service cannot reset its own stream (tonic turns an error into
//! trailers with a status), so this layer wraps the responses of the whole
//! server: the body of a `ByteStream/Read` response fails after its first
//! data frame, and hyper answers a failing body by resetting the stream
//! with `INTERNAL_ERROR`. The client sees the reset, never a status.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};

/// Wraps every service of the server; resets reads only when `on`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResetLayer {
    pub on: bool,
}

impl<S> tower::Layer<S> for ResetLayer {
    type Service = ResetService<S>;

    fn layer(&self, inner: S) -> ResetService<S> {
        ResetService { inner, on: self.on }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct ResetService<S> {
    inner: S,
    on: bool,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, Req> tower::Service<http::Request<Req>> for ResetService<S>
where
    S: tower::Service<http::Request<Req>, Response = http::Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<ResetBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Req>) -> Self::Future {
        let reset = self.on && req.uri().path() == "/google.bytestream.ByteStream/Read";
        let response = self.inner.call(req);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|inner| ResetBody { inner, reset, frames: 0 }))
        })
    }
}

/// A response body that, when `reset`, fails after its first data frame.
#[derive(Debug)]
pub(crate) struct ResetBody {
    inner: tonic::body::Body,
    reset: bool,
    frames: usize,
}

impl Body for ResetBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.reset && self.frames > 0 {
            return Poll::Ready(Some(Err("the hostile server resets the stream".into())));
        }
        let frame = std::task::ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if matches!(&frame, Some(Ok(f)) if f.is_data()) {
            self.frames += 1;
        }
        Poll::Ready(frame.map(|f| f.map_err(BoxError::from)))
    }

    fn is_end_stream(&self) -> bool {
        !(self.reset && self.frames > 0) && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        if self.reset { http_body::SizeHint::default() } else { self.inner.size_hint() }
    }
}
