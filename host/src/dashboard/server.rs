//! The HTTP/1.1 server of `vx dashboard`: hyper on a listener bound to
//! 127.0.0.1 only, one task per connection, each request answered by
//! [`App::respond`] on a blocking thread (SQLite reads are synchronous).
//! It runs until `stop` resolves (SIGINT or SIGTERM, in `cli`).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::routes::App;

/// Binds 127.0.0.1:`port` (0: any free port).
pub async fn bind(port: u16) -> std::io::Result<TcpListener> {
    TcpListener::bind(("127.0.0.1", port)).await
}

/// Serves `app` on `listener` until `stop` resolves.
pub async fn serve(listener: TcpListener, app: Arc<App>, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => return,
        };
        // A connection that failed before it began (the client gave up) is
        // no reason to stop serving the others.
        let Ok((stream, _)) = accepted else { continue };
        let app = app.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(app.clone(), request));
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

async fn handle(app: Arc<App>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = request.method().as_str().to_string();
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or("").to_string();
    let head = method == "HEAD";
    let answer = tokio::task::spawn_blocking(move || app.respond(&method, &path, &query)).await;
    let answer = answer.unwrap_or_else(|_| super::routes::Response {
        status: 500,
        content_type: "application/json",
        body: br#"{"error":"the request failed inside vx"}"#.to_vec(),
    });
    let body = if head { Bytes::new() } else { Bytes::from(answer.body) };
    let response = Response::builder()
        .status(answer.status)
        .header("content-type", answer.content_type)
        .header("cache-control", "no-store")
        .body(Full::new(body))
        .expect("a response from a valid status and header");
    Ok(response)
}
