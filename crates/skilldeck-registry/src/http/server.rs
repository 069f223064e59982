//! The server loop: HTTP/1.1 on a TCP listener with the limits a public
//! listener needs and `axum::serve` does not set:
//!
//! - a header read timeout ([`ServerLimits::header_read_timeout`]): a
//!   client that does not finish its request head in time is
//!   disconnected (slowloris);
//! - a request body timeout ([`ServerLimits::body_read_timeout`]): a
//!   body that stops arriving fails the request (tower-http's
//!   `RequestBodyTimeoutLayer`, reset at every chunk);
//! - a cap on open connections ([`ServerLimits::max_connections`]): past
//!   it the listener stops accepting until one closes (the kernel's
//!   backlog holds the rest), so held connections cannot exhaust file
//!   descriptors or memory;
//! - a request timeout ([`ServerLimits::request_timeout`]): a request the
//!   registry has not answered in time is dropped (its transaction rolls
//!   back) and answered 503 `registry-request-timeout` with
//!   `Retry-After`;
//! - the peer address in each request's extensions (`ConnectInfo`), for
//!   the failed-authentication throttle.
//!
//! and what every request leaves behind (`observe`): its log line, its
//! span (exported over OTLP when telemetry is on) and its metrics.
//!
//! Every face (the CLI's `registry serve`, the tests) serves through
//! [`serve`], so the limits are the same everywhere.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt as _;
use tower_http::timeout::RequestBodyTimeoutLayer;

use crate::service::config::ServerLimits;

/// Runs `request` through `next`, or answers 503
/// `registry-request-timeout` once `limit` has passed without a response.
async fn within(
    limit: std::time::Duration,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => crate::error::RegistryError::Busy {
            code: "registry-request-timeout",
            detail: format!(
                "the registry did not finish this request within {} s; retry later \
                 (a write it was making was rolled back unless it had already committed)",
                limit.as_secs()
            ),
            retry_after: crate::error::BUSY_RETRY_AFTER_SECS,
        }
        .into_response(),
    }
}

/// Serves `app` on `listener` with `limits` until `shutdown` resolves,
/// then lets the open connections finish their current request.
///
/// Accept errors (a peer that reset before `accept`, no file descriptor
/// left) are logged and the loop goes on; it never ends on its own.
pub async fn serve<F>(
    listener: TcpListener,
    app: Router,
    limits: ServerLimits,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    let request_timeout = limits.request_timeout;
    let app = app
        .layer(RequestBodyTimeoutLayer::new(limits.body_read_timeout))
        .layer(axum::middleware::from_fn(move |request, next| {
            within(request_timeout, request, next)
        }))
        // Outermost: the log line, the span and the metrics see the
        // response of every layer inside, timeouts included.
        .layer(axum::middleware::from_fn(crate::http::observe::observe));
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                // The semaphore is never closed.
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "registry: accept failed");
                    // Out of file descriptors and the like: give the
                    // other tasks a turn before trying again.
                    tokio::task::yield_now().await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let app = app.clone();
            async move {
                let response = app.oneshot(request.map(Body::new)).await;
                Ok::<_, Infallible>(match response {
                    Ok(r) => r,
                    Err(never) => match never {},
                })
            }
        });
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A peer that goes away, or is cut off by a timeout, ends its
            // connection with an error: nothing to report.
            let _ = connection.await;
            drop(permit);
        });
    }
    graceful.shutdown().await;
    Ok(())
}
