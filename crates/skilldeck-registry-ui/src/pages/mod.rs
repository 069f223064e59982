//! The pages, one module per area. Every handler takes its session from
//! [`crate::state`] and calls the registry service in-process; the CSRF
//! check has already run in front of every `POST`.

pub mod admin;
pub mod agents;
pub mod auth;
pub mod files;
pub mod selection;
pub mod skills;
pub mod sso;
pub mod upload;
