//! The errors of starting and running the server. Errors of single requests
//! are MCP errors ([`rmcp::ErrorData`]) or tool results with `isError`, and
//! never stop the server.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The async runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The HTTP address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The address to listen on could not be parsed or resolved.
    #[error("cannot listen on '{text}': {message}")]
    Address {
        /// The address as given.
        text: String,
        /// Why.
        message: String,
    },
    /// The token file could not be read, or holds no token.
    #[error("token file {path}: {message}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A non-loopback address without a token.
    #[error(
        "refusing to serve {addr} without authentication: it is not a loopback address; \
         pass --token-file, or bind 127.0.0.1"
    )]
    Unauthenticated {
        /// The address.
        addr: SocketAddr,
    },
    /// The stdio or HTTP transport failed.
    #[error("transport: {0}")]
    Transport(String),
    /// Where the skills come from (a registry agent, the watched roots)
    /// failed.
    #[error(transparent)]
    Source(#[from] skilldeck_source::Error),
    /// The catalog for the tool description could not be rendered.
    #[error(transparent)]
    Core(#[from] skilldeck::Error),
    /// An upstream of the gateway (`--upstream`) is misnamed, could not be
    /// reached, or could not list its skills.
    #[error("{0}")]
    Upstream(String),
    /// rmcp's session store could not open, reach or close an HTTP session.
    #[error("session: {0}")]
    Session(
        #[from] rmcp::transport::streamable_http_server::session::local::LocalSessionManagerError,
    ),
    /// An HTTP session was to be opened without a slot of the session cap
    /// (only an admitted `initialize` opens one).
    #[error(
        "no session slot was reserved for this session: only an initialize admitted under \
         the session cap opens one"
    )]
    NoSessionSlot,
    /// Logging could not be set up.
    #[error("cannot set up logging: {0}")]
    Logging(String),
    /// Span export is misconfigured or could not be set up.
    #[error("telemetry: {0}")]
    Telemetry(String),
}

impl From<skilldeck_telemetry::Error> for Error {
    fn from(e: skilldeck_telemetry::Error) -> Self {
        Error::Telemetry(e.to_string())
    }
}
