//! The HTTP/1.1 server of `vx dashboard`: hyper on a listener bound to
//! 127.0.0.1 only, one task per connection, each request answered by
//! [`App::respond`] on a blocking thread (SQLite reads are synchronous).
//! It runs until `stop` resolves (SIGINT or SIGTERM, in `cli`).
//!
//! Binding to the loopback address keeps other machines out, but not a
//! web page in the user's own browser: through DNS rebinding, a page of
//! `evil.example` can resolve its own name to 127.0.0.1 and read the
//! answers as same-origin. Its requests then carry `Host: evil.example`,
//! so every request whose `Host` is not the loopback address or
//! `localhost` with the dashboard's own port is refused (403).

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
pub(crate) async fn bind(port: u16) -> std::io::Result<TcpListener> {
    TcpListener::bind(("127.0.0.1", port)).await
}

/// Serves `app` on `listener` until `stop` resolves.
pub(crate) async fn serve(listener: TcpListener, app: Arc<App>, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    let port = listener.local_addr().map_or(0, |a| a.port());
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
            let service = service_fn(move |request| handle(app.clone(), port, request));
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// Whether `host` (a `Host` header) names this dashboard on the loopback
/// interface: `127.0.0.1`, `localhost` or `[::1]`, with `port` (which a
/// browser leaves out only for port 80).
fn allowed_host(host: &str, port: u16) -> bool {
    let host = host.to_ascii_lowercase();
    let (name, given) = match host.rsplit_once(':') {
        Some((name, p)) if !p.contains(']') => (name.to_string(), p.parse::<u16>().ok()),
        _ => (host.clone(), Some(80)),
    };
    matches!(name.as_str(), "127.0.0.1" | "localhost" | "[::1]") && given == Some(port)
}

async fn handle(app: Arc<App>, port: u16, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let host = request.headers().get(hyper::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !allowed_host(host, port) {
        let body =
            br#"{"error":"the dashboard answers only requests for 127.0.0.1, localhost or [::1] with its port"}"#;
        let response = Response::builder()
            .status(403)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(body)))
            .expect("a response from a valid status and header");
        return Ok(response);
    }
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

#[cfg(test)]
mod tests {
    use super::allowed_host;

    #[test]
    fn only_loopback_names_with_the_port_are_allowed() {
        for ok in ["127.0.0.1:4000", "localhost:4000", "LOCALHOST:4000", "[::1]:4000"] {
            assert!(allowed_host(ok, 4000), "{ok}");
        }
        for refused in ["evil.example:4000", "127.0.0.1:4001", "localhost", "", "127.0.0.1.evil.example:4000", "[::1]"]
        {
            assert!(!allowed_host(refused, 4000), "{refused}");
        }
        assert!(allowed_host("localhost", 80), "a browser leaves port 80 out");
    }
}
