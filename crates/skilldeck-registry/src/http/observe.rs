//! What every request leaves behind, added in one place ([`serve`]
//! applies [`observe`] to the whole app, API and UI alike):
//!
//! - one log line (target `skilldeck::registry::request`, INFO): method,
//!   route template, status, duration in ms and the caller's
//!   [`PrincipalKind`] (never the path with its ids and query, never a
//!   header, never the token), inside the request's span, so it carries
//!   the request's `trace_id`;
//! - a span with the OpenTelemetry HTTP server conventions when spans are
//!   exported (`otel.name` = `METHOD /route`, `http.request.method`,
//!   `http.route`, `http.response.status_code`, `url.scheme`,
//!   `client.address`, `error.type` and an error status on a 5xx), the
//!   child of the client's `traceparent` when it sent a valid one;
//! - the request counter and latency histogram of `/metrics`.
//!
//! [`serve`]: crate::http::serve

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use skilldeck_telemetry::{TRACEPARENT, TRACESTATE, TraceContext, valid_traceparent};
use tracing::Instrument as _;

use crate::http::peer::peer_of;
use crate::service::metrics::{UNMATCHED_ROUTE, metrics};
use crate::service::principal::{CallerSlot, with_caller_slot};

/// The target of the request log line and span (`RUST_LOG` can filter
/// it: `skilldeck::registry::request=warn` silences the lines).
pub const REQUEST_TARGET: &str = "skilldeck::registry::request";

/// The scheme the listener speaks (TLS, if any, ends at a proxy).
const URL_SCHEME: &str = "http";

/// The client's W3C trace context from the `traceparent` (and
/// `tracestate`) header; a malformed one is ignored (a new trace starts).
pub fn trace_context(headers: &HeaderMap) -> Option<TraceContext> {
    let tp = headers.get(TRACEPARENT)?.to_str().ok()?;
    valid_traceparent(tp).then(|| TraceContext {
        traceparent: tp.trim().to_owned(),
        tracestate: headers
            .get(TRACESTATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    })
}

/// The route template the router matched, or [`UNMATCHED_ROUTE`] (a
/// fallback: the label set stays bounded whatever paths are probed).
fn route_of(request: &Request) -> String {
    request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .filter(|r| !r.contains("__private__"))
        .unwrap_or(UNMATCHED_ROUTE)
        .to_owned()
}

/// The middleware (see the module): logs, traces and counts `request`.
pub async fn observe(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = route_of(&request);
    let trace = trace_context(request.headers());
    let exporting = skilldeck_telemetry::exporting();
    let client = exporting
        .then(|| peer_of(request.extensions()).map(|a| a.ip().to_string()))
        .flatten();
    let span = tracing::info_span!(
        target: REQUEST_TARGET,
        "request",
        trace_id = tracing::field::Empty,
        otel.name = exporting.then(|| format!("{method} {route}")),
        otel.kind = exporting.then_some("server"),
        otel.status_code = tracing::field::Empty,
        http.request.method = exporting.then_some(method.as_str()),
        http.route = exporting.then_some(route.as_str()),
        http.response.status_code = tracing::field::Empty,
        url.scheme = exporting.then_some(URL_SCHEME),
        client.address = client,
        error.type = tracing::field::Empty,
        skilldeck.principal.kind = tracing::field::Empty,
    );
    skilldeck_telemetry::bind_trace_id(&span, trace.as_ref());
    let slot = CallerSlot::default();
    let response = with_caller_slot(slot.clone(), next.run(request))
        .instrument(span.clone())
        .await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    let principal = slot.kind();
    if exporting {
        // An i64: the OpenTelemetry layer exports a u64 as text.
        span.record("http.response.status_code", i64::from(status));
        span.record("skilldeck.principal.kind", principal.as_str());
        if status >= 500 {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", status.to_string());
        }
    }
    metrics().request(&method, &route, status, elapsed);
    // Milliseconds, to a tenth.
    let duration_ms = (elapsed.as_secs_f64() * 10_000.0).round() / 10.0;
    span.in_scope(|| {
        tracing::info!(
            target: REQUEST_TARGET,
            method,
            route,
            status,
            duration_ms,
            principal = principal.as_str(),
            "request"
        );
    });
    response
}
