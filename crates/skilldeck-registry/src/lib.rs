//! # skilldeck-registry
//!
//! Skills for a fleet of agents: immutable versions with movable labels,
//! agents with assignments, and each agent's resolved catalog and lock.
//! The wire types ([`wire`]) are shared by the server, the clients and the
//! web UI; the server needs the `server` feature (on by default).
//!
//! The server is two layers: the service ([`service`], one [`Registry`]
//! that every face calls and that decides authorization from a
//! [`Principal`]) and the HTTP API
//! ([`http::api_router`]).

#![warn(missing_docs)]

pub mod client;
pub mod names;
pub mod wire;

#[cfg(feature = "server")]
pub mod http;
#[cfg(feature = "server")]
pub mod service;

#[cfg(feature = "server")]
pub use service::config::{RegistryConfig, RegistryLimits, ServerLimits};
#[cfg(feature = "server")]
pub use service::error::RegistryError;
#[cfg(feature = "server")]
pub use service::gc::GcReport;
#[cfg(feature = "server")]
pub use service::principal::{Principal, Scope};
#[cfg(feature = "server")]
pub use service::registry::Registry;
#[cfg(feature = "server")]
pub use service::resolve::{CatalogPreview, Omitted};
#[cfg(feature = "server")]
pub use service::skills::{Blob, BlobRef, SkillQuery};
#[cfg(feature = "server")]
pub use service::state::Rendered;
