//! [`Error`]: why a source could not provide skills.

use std::path::PathBuf;

/// Why a source could not start or refresh.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The roots could not be watched.
    #[error("cannot watch {path}: {message}")]
    Watch {
        /// The folder.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Serving an agent's skills from a registry failed: the lock or a
    /// skill could not be fetched, verified or put in place.
    #[error("registry: {0}")]
    Registry(String),
    /// The registry refused a request or could not be reached (the
    /// client's error, with its problem document when there is one).
    #[error("registry: {0}")]
    Client(#[from] skilldeck_registry::client::ClientError),
    /// A git source could not be parsed, resolved or fetched, or its
    /// content broke a rule (`spec`: the source as given or as the lock
    /// records it).
    #[error("{spec}: {message}")]
    Git {
        /// The git source.
        spec: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// An OCI source could not be parsed, reached, pushed or pulled, or
    /// what the registry sent broke a rule (a digest or fingerprint that
    /// does not match, a manifest that is not a skill artifact).
    #[error("{reference}: {message}")]
    Oci {
        /// The OCI reference (or registry) as given.
        reference: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// A skill could not be packed, or a package broke a package rule
    /// (its diagnostics say which entry).
    #[error(transparent)]
    Package(#[from] skilldeck_package::Error),
    /// A well-known source could not be parsed, read or fetched, or what
    /// it served broke a rule (`spec`: the source as given or as the lock
    /// records it).
    #[error("{spec}: {message}")]
    WellKnown {
        /// The well-known source.
        spec: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// A marketplace source could not be parsed or resolved, or its
    /// marketplace or plugin broke a rule (`spec`: the source as given or
    /// as the lock records it).
    #[error("{spec}: {message}")]
    Plugin {
        /// The marketplace source.
        spec: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// A file or folder could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The host could not be built or reloaded.
    #[error(transparent)]
    Core(#[from] skilldeck::Error),
}
