//! # skilldeck-registry
//!
//! Skills for a fleet of agents: immutable versions with movable labels,
//! agents with assignments, and each agent's resolved catalog and lock.
//! The wire types ([`wire`]) are shared by the server, the clients and the
//! web UI; the server needs the `server` feature (on by default).
//!
//! The server is three layers: the storage layer (every SQL statement,
//! one module per concern, for SQLite and PostgreSQL), the service (one
//! [`Registry`] that every face calls and that decides authorization and
//! the audit log from a [`Principal`]) and the HTTP API
//! ([`http::api_router`]). The web UI (`skilldeck-registry-ui`) is a
//! second face on the same service and maps its errors
//! ([`RegistryError`]) itself.

#![deny(missing_docs)]

pub mod client;
pub mod names;
pub mod wire;

#[cfg(feature = "server")]
mod db_limits;
#[cfg(feature = "server")]
mod error;
#[cfg(feature = "server")]
pub mod http;
#[cfg(feature = "server")]
mod service;
#[cfg(feature = "server")]
mod storage;

#[cfg(feature = "server")]
pub use error::RegistryError;
#[cfg(feature = "server")]
pub use service::browse::{
    BrowsePage, BrowseQuery, BrowseSort, MAX_FACET_NAMESPACES, Need, SkillFacets,
};
#[cfg(feature = "server")]
pub use service::config::WellKnownPolicy;
#[cfg(feature = "server")]
pub use service::config::{
    DEFAULT_PROTECTED_LABEL, DbLimits, MAX_PAGE_LIMIT, RegistryConfig, RegistryLimits,
    ReportPolicy, ServerLimits, TestRunLimits, TrustPolicy,
};
#[cfg(feature = "server")]
pub use service::gc::GcReport;
#[cfg(feature = "server")]
#[doc(hidden)]
pub use service::health::StalledWrite;
#[cfg(feature = "server")]
pub use service::principal::{Principal, PrincipalKind, Scope};
#[cfg(feature = "server")]
pub use service::publish::wire_diagnostic;
#[cfg(feature = "server")]
pub use service::publish::{
    INVALID_ENVIRONMENTS, MAX_ENVIRONMENTS, MAX_ENVIRONMENTS_BYTES, parse_environments,
};
#[cfg(feature = "server")]
pub use service::registry::Registry;
#[cfg(feature = "server")]
pub use service::resolve::{CatalogPreview, Omitted, SHADOWED_BY_ASSIGNMENT};
#[cfg(feature = "server")]
pub use service::runner::{TestRunJob, TestRunRefusal, TestRunTarget, TestRunner};
#[cfg(feature = "server")]
pub use service::skills::{Blob, BlobRef, SkillQuery};
#[cfg(feature = "server")]
pub use service::state::Rendered;
#[cfg(feature = "server")]
pub use service::store::BlobStore;
#[cfg(feature = "server")]
pub use service::ui_sessions::{SignIn, UI_KEY_BYTES, UiSession, UiSessionTimes};
