//! The crate's one error type.

/// Why telemetry could not be set up or flushed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting is not valid (names where it came from).
    #[error("{0}")]
    Config(String),
    /// The exporter could not be built or installed.
    #[error("{0}")]
    Setup(String),
    /// Spans could not be flushed to the collector.
    #[error("{0}")]
    Flush(String),
}
