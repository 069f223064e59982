//! Span export from Node.js (opt-in) and the caller's trace id on every
//! call: `skilldeck-telemetry` does the work; this module decides when the
//! exporter starts and enters each call's span on the libuv worker thread
//! that runs the host call.
//!
//! Export starts at the first `Deck.discover` whose `otlpEndpoint`,
//! `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` or config `[telemetry] endpoint`
//! names a collector; without one nothing is installed (no thread, no
//! subscriber) and each call pays one atomic load.

use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use skilldeck::deck::TelemetryConfig;
use skilldeck_telemetry::{Error, Settings};

use crate::job::{Job, spawn};

/// The face name on the spans (`skilldeck.face`).
const FACE: &str = "node";
/// How the option is named in errors.
const OPTION: &str = "otlpEndpoint";

/// Starts the process-wide exporter when `config`, the `OTEL_*` variables
/// or `otlp_endpoint` name a collector (the first settings win).
pub(crate) fn start(config: &TelemetryConfig, otlp_endpoint: Option<&str>) -> napi::Result<()> {
    let explicit = otlp_endpoint.map(|url| (OPTION, url));
    let settings = Settings::resolve_with(config, explicit, |name| std::env::var(name).ok())
        .map_err(|e| error(&e))?;
    if let Some(settings) = settings {
        skilldeck_telemetry::export::install(&settings).map_err(|e| error(&e))?;
    }
    Ok(())
}

/// Enters the call's span on this thread (the worker running the host
/// call) until the guard drops, with the caller's `trace_id` bound.
pub(crate) fn enter(operation: &'static str, trace_id: Option<&str>) -> tracing::span::EnteredSpan {
    skilldeck_telemetry::call_span(FACE, operation, trace_id).entered()
}

/// A telemetry failure as a JavaScript error (an invalid value for a bad
/// setting).
fn error(e: &Error) -> napi::Error {
    match e {
        Error::Config(message) => crate::errors::invalid_value(format!("telemetry: {message}")),
        Error::Setup(message) | Error::Flush(message) => crate::errors::fail(
            "SkilldeckError",
            &format!("telemetry: {message}"),
            serde_json::json!({}),
        ),
    }
}

/// The flush, off the JavaScript thread.
pub(crate) fn flush_job() -> AsyncTask<Job<bool>> {
    spawn(|| skilldeck_telemetry::export::flush().map_err(|e| error(&e)))
}

/// Exports the spans still queued, waiting for the collector (each export
/// bounded by 5 s). False when nothing is exported in this process.
#[napi(ts_return_type = "Promise<boolean>")]
pub fn flush_telemetry() -> AsyncTask<Job<bool>> {
    flush_job()
}

/// Flushes and stops the exporter (the package calls it at process exit;
/// bounded: 3 s). Spans are no longer exported. False when none ran.
#[napi]
pub fn shutdown_telemetry() -> bool {
    skilldeck_telemetry::export::shutdown().is_some()
}

/// True while spans are exported.
#[napi]
pub fn telemetry_enabled() -> bool {
    skilldeck_telemetry::exporting()
}
