//! # skilldeck-telemetry
//!
//! OpenTelemetry export of skilldeck's `tracing` spans (OTLP over HTTP,
//! protobuf), for any OTLP collector or Langfuse, shared by every face: the
//! MCP server (`skilldeck serve`), the Python and the Node.js bindings.
//!
//! - [`Settings::resolve`] turns the `[telemetry]` config section and the
//!   standard `OTEL_*` variables into export settings, or `None` when
//!   nothing names an endpoint: then nothing below runs, no exporter thread
//!   starts and no layer is installed.
//! - One trace id in the log lines and the exported trace
//!   ([`bind_trace_id`], [`operation_span`]); a caller's own trace id bound
//!   to the spans of its call ([`CallerTrace`], [`call_span`]).
//! - The exporter itself (`export`, with the `otel` cargo feature): a
//!   bounded batch queue drained by a background thread, counted drops,
//!   a bounded shutdown; the layer a face adds to its subscriber
//!   (`export::layer`), or the process-wide exporter a binding installs
//!   (`export::install`, `export::flush`, `export::shutdown`).
//!
//! The core and the host depend on `tracing` alone: a face binds a trace id
//! by entering a span of its own around the host's call, on the thread that
//! runs it.

#![deny(missing_docs)]

mod context;
mod error;
#[cfg(feature = "otel")]
pub mod export;
mod settings;
mod span;
mod state;

pub use context::{
    CallerTrace, MAX_CALLER_TRACE_ID_CHARS, TRACEPARENT, TRACESTATE, TraceContext,
    valid_traceparent,
};
pub use error::Error;
pub use settings::{
    DEFAULT_QUEUE_SIZE, DEFAULT_SERVICE_NAME, EXPORT_INTERVAL, EXPORT_TIMEOUT, MAX_EXPORT_BATCH,
    SHUTDOWN_TIMEOUT, Settings, TRACES_PATH, traces_url,
};
pub use span::{
    bind_caller_trace, bind_trace_id, call_span, operation_span, record_content, set_parent,
};
pub use state::{export_content, exporting};
