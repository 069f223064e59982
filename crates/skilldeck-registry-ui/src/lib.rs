//! # skilldeck-registry-ui
//!
//! The registry's web UI: pages rendered on the server under `/ui`
//! (askama templates), usable without JavaScript, with htmx (vendored,
//! 2.0.11) for progressive enhancement only. Every page calls the
//! registry's service layer in-process (`skilldeck_registry::Registry`),
//! so authorization is the service's, exactly as for the HTTP API.
//!
//! - [`session`]: server-side sessions behind an `HttpOnly`,
//!   `SameSite=Strict` cookie; [`csrf`]: the one CSRF check in front of
//!   every state-changing request; [`headers`]: CSP and friends.
//! - [`markdown`]: SKILL.md rendered and always sanitised.
//! - [`views`]: the templates; [`assets`]: CSS, htmx, icon with content
//!   hashes in their paths.

#![warn(missing_docs)]

pub mod assets;
pub mod csrf;
pub mod error;
pub mod headers;
pub mod limits;
pub mod markdown;
pub mod secret;
pub mod session;
pub mod views;
