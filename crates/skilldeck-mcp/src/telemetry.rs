//! Telemetry of the MCP server: the OTLP export and the trace ids are
//! `skilldeck-telemetry`'s (shared with the Python and Node.js bindings,
//! re-exported here); this module adds what is MCP's own, reading a
//! client's trace context from a request's `_meta` or HTTP headers.
//!
//! [`Settings::resolve`] turns the `[telemetry]` config section and the
//! standard `OTEL_*` variables into export settings, or `None` when nothing
//! names an endpoint: then nothing below runs and no layer is installed
//! (see [`crate::logging::init_with_telemetry`]). The exporter itself needs
//! the `otel` cargo feature (on in the released `skilldeck` binary).
//!
//! Exported by default: span names, timings, parent links and the span
//! fields (skill names, counts, tool names, request ids). Tool arguments
//! and results only with `export-content = true` ([`export_content`]).

use serde_json::{Map, Value};
pub use skilldeck_telemetry::{
    DEFAULT_QUEUE_SIZE, DEFAULT_SERVICE_NAME, EXPORT_INTERVAL, EXPORT_TIMEOUT, MAX_EXPORT_BATCH,
    SHUTDOWN_TIMEOUT, Settings, TRACEPARENT, TRACES_PATH, TRACESTATE, TraceContext, bind_trace_id,
    export_content, exporting, operation_span, record_content, set_parent, traces_url,
    valid_traceparent,
};

/// The trace context of a request: `_meta.traceparent` (the request's own
/// `_meta` first, then the context's), else the HTTP `traceparent` header.
/// Malformed values are ignored (a fresh trace starts).
pub fn trace_context(
    metas: &[Option<&Map<String, Value>>],
    headers: Option<&http::HeaderMap>,
) -> Option<TraceContext> {
    for meta in metas.iter().flatten() {
        if let Some(tp) = meta.get(TRACEPARENT).and_then(Value::as_str)
            && valid_traceparent(tp)
        {
            return Some(TraceContext {
                traceparent: tp.trim().to_owned(),
                tracestate: meta
                    .get(TRACESTATE)
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        }
    }
    let headers = headers?;
    let tp = headers.get(TRACEPARENT)?.to_str().ok()?;
    valid_traceparent(tp).then(|| TraceContext {
        traceparent: tp.trim().to_owned(),
        tracestate: headers
            .get(TRACESTATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn meta_traceparent_wins_over_the_http_header() {
        let mut meta = Map::new();
        meta.insert(TRACEPARENT.into(), Value::from(TP));
        meta.insert(TRACESTATE.into(), Value::from("vendor=1"));
        let mut headers = http::HeaderMap::new();
        headers.insert(
            TRACEPARENT,
            http::HeaderValue::from_static(
                "00-11111111111111111111111111111111-2222222222222222-01",
            ),
        );
        let from_meta = trace_context(&[None, Some(&meta)], Some(&headers)).unwrap();
        assert_eq!(from_meta.traceparent, TP);
        assert_eq!(from_meta.tracestate.as_deref(), Some("vendor=1"));
        assert_eq!(from_meta.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        let from_header = trace_context(&[None], Some(&headers)).unwrap();
        assert_eq!(from_header.trace_id(), "11111111111111111111111111111111");
        assert_eq!(trace_context(&[None], None), None);
    }

    #[test]
    fn a_malformed_meta_traceparent_falls_back_to_the_header() {
        let mut meta = Map::new();
        meta.insert(TRACEPARENT.into(), Value::from("not-a-traceparent"));
        assert_eq!(trace_context(&[Some(&meta)], None), None);
        let mut headers = http::HeaderMap::new();
        headers.insert(TRACEPARENT, http::HeaderValue::from_static(TP));
        let tc = trace_context(&[Some(&meta)], Some(&headers)).unwrap();
        assert_eq!(tc.traceparent, TP);
    }
}
