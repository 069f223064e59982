//! Logs go to stderr (stdout carries the protocol in stdio mode), as text
//! or JSON lines; `RUST_LOG` filters them (default `info`). Request spans
//! (see [`crate::server`]) put `request_id` and `trace_id` on every line
//! logged while a request is handled.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::error::Error;

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
