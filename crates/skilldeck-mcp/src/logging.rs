//! Logs go to stderr (stdout carries the protocol in stdio mode), as text
//! or JSON lines; `RUST_LOG` filters them (default `info`). Request spans
//! (see the server module) put `request_id` and `trace_id` on every line
//! logged while a request is handled.
//!
//! With telemetry configured ([`crate::telemetry`]) and the `otel` feature,
//! a second layer exports the `skilldeck*` spans at INFO and above over
//! OTLP; `RUST_LOG` filters only the log lines. Without it the subscriber is
//! the log layer alone.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::error::Error;
use crate::telemetry::Settings;

/// The log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, with the span fields.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(format!("unknown log format '{s}' (expected text or json)")),
        }
    }
}

/// The filter without `RUST_LOG`: our INFO lines, and only warnings from
/// rmcp (its INFO line is a `Debug` dump of the client's initialize
/// parameters; the server logs the client's name and version instead).
pub const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// Installs the global subscriber (once per process; a second call fails).
pub fn init(format: LogFormat) -> Result<(), Error> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_span_events(FmtSpan::NONE)
        .with_target(false);
    let result = match format {
        LogFormat::Text => builder.with_ansi(false).try_init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    result.map_err(|e| Error::Logging(e.to_string()))
}

/// Installs the global subscriber, exporting spans when `telemetry` is set.
/// Call it before the async runtime starts (the exporter's HTTP client owns
/// one); keep the returned guard until the server stopped: dropping it
/// exports the last spans (bounded, see
/// [`crate::telemetry::SHUTDOWN_TIMEOUT`]) and logs how many were dropped.
pub fn init_with_telemetry(
    format: LogFormat,
    telemetry: Option<&Settings>,
) -> Result<TelemetryGuard, Error> {
    let Some(settings) = telemetry else {
        init(format)?;
        return Ok(TelemetryGuard::default());
    };
    export_init(format, settings)
}

/// Flushes the span exporter when dropped (nothing without one).
#[derive(Debug, Default)]
pub struct TelemetryGuard {
    #[cfg(feature = "otel")]
    exporter: Option<skilldeck_telemetry::export::Exporter>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some(exporter) = self.exporter.take() {
            skilldeck_telemetry::export::set_inactive();
            exporter.shutdown();
        }
    }
}

#[cfg(not(feature = "otel"))]
fn export_init(format: LogFormat, settings: &Settings) -> Result<TelemetryGuard, Error> {
    init(format)?;
    tracing::warn!(
        endpoint = %settings.traces_endpoint,
        "telemetry is configured but this build has no OpenTelemetry export \
         (cargo feature `otel`); spans are not exported"
    );
    Ok(TelemetryGuard::default())
}

#[cfg(feature = "otel")]
fn export_init(format: LogFormat, settings: &Settings) -> Result<TelemetryGuard, Error> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let (exporter, tracer) = skilldeck_telemetry::export::Exporter::new(settings)?;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_span_events(FmtSpan::NONE)
        .with_target(false);
    let fmt = match format {
        LogFormat::Text => fmt.with_ansi(false).with_filter(filter).boxed(),
        LogFormat::Json => fmt
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .with_filter(filter)
            .boxed(),
    };
    let otel = skilldeck_telemetry::export::layer(tracer);
    tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init()
        .map_err(|e| Error::Logging(e.to_string()))?;
    skilldeck_telemetry::export::set_active(settings);
    tracing::info!(
        endpoint = %settings.traces_endpoint,
        service = %settings.service_name,
        content = settings.export_content,
        "telemetry: exporting spans over OTLP/HTTP"
    );
    Ok(TelemetryGuard {
        exporter: Some(exporter),
    })
}
