//! Span export from Python (opt-in) and the caller's trace id on every
//! call: `skilldeck-telemetry` does the work; this module decides when the
//! exporter starts and wraps each host call in its span.
//!
//! Export starts at the first `Deck.discover` / `Deck.from_registry` whose
//! `otlp_endpoint`, `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` or config
//! `[telemetry] endpoint` names a collector; without one nothing is
//! installed (no thread, no subscriber) and each call pays one atomic load.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use skilldeck::deck::TelemetryConfig;
use skilldeck_telemetry::{Error, Settings};

/// The face name on the spans (`skilldeck.face`).
const FACE: &str = "python";
/// How the option is named in errors.
const OPTION: &str = "otlp_endpoint";

/// Starts the process-wide exporter when `config`, the `OTEL_*` variables
/// or `otlp_endpoint` name a collector (the first settings win for the
/// process).
pub(crate) fn start(config: &TelemetryConfig, otlp_endpoint: Option<&str>) -> Result<(), Error> {
    let explicit = otlp_endpoint.map(|url| (OPTION, url));
    let Some(settings) = Settings::resolve_with(config, explicit, |name| std::env::var(name).ok())?
    else {
        return Ok(());
    };
    skilldeck_telemetry::export::install(&settings).map(|_| ())
}

/// Runs `work` (a host call) inside the call's span, entered on this
/// thread, with the caller's `trace_id` bound.
pub(crate) fn traced<T>(
    operation: &'static str,
    trace_id: Option<&str>,
    work: impl FnOnce() -> T,
) -> T {
    skilldeck_telemetry::call_span(FACE, operation, trace_id).in_scope(work)
}

/// Enters the call's span on this thread (the one that runs the host
/// call) until the guard drops, with the caller's `trace_id` bound.
pub(crate) fn enter(operation: &'static str, trace_id: Option<&str>) -> tracing::span::EnteredSpan {
    skilldeck_telemetry::call_span(FACE, operation, trace_id).entered()
}

/// The Python exception for a telemetry failure.
pub(crate) fn error(e: &Error) -> PyErr {
    match e {
        Error::Config(message) => PyValueError::new_err(format!("telemetry: {message}")),
        Error::Setup(message) | Error::Flush(message) => {
            PyRuntimeError::new_err(format!("telemetry: {message}"))
        }
    }
}

/// Exports the spans waiting in the queue now, waiting for the collector
/// (`Deck.close` and short scripts). False when nothing is exported.
#[pyfunction]
pub(crate) fn flush_telemetry(py: Python<'_>) -> PyResult<bool> {
    py.detach(skilldeck_telemetry::export::flush)
        .map_err(|e| error(&e))
}

/// Flushes and stops the exporter (registered with `atexit`): spans are
/// no longer exported in this process. False when none was running.
#[pyfunction]
pub(crate) fn shutdown_telemetry(py: Python<'_>) -> bool {
    py.detach(|| skilldeck_telemetry::export::shutdown().is_some())
}

/// True while spans are exported.
#[pyfunction]
pub(crate) fn telemetry_enabled() -> bool {
    skilldeck_telemetry::exporting()
}
