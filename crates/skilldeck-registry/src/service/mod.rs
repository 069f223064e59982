//! The registry's service layer: one [`Registry`](registry::Registry) that
//! the HTTP API and the web UI both call. Authorization is decided here,
//! from the caller's [`Principal`](principal::Principal), never in a face.
//!
//! - [`config`]: where the database and the store are, and every cap and TTL.
//! - the storage layer below (`crate::storage`) holds every SQL statement;
//!   [`RegistryError`](crate::RegistryError) is the one error enum.
//! - [`registry`]: opening (migrations), the shared state.
//! - [`store`]: the blob store (the database is behind the storage layer).
//! - [`tokens`], [`principal`]: bearer tokens (lifecycle: expiry,
//!   revocation, admin-file rotation) and scopes; [`throttle`]: the
//!   failed-authentication throttle.
//! - [`publish`], [`skills`]: publishing and reading skills and versions;
//!   [`staging`]: the folder publishes unpack in, swept at start-up.
//! - [`review`]: namespace policies, review before release, blocking;
//!   [`signing`]: the keys that may sign a namespace, signatures at publish.
//! - `fresh`: the generation every cache entry is tagged with, and how
//!   writes on other replicas reach this one (PostgreSQL `NOTIFY`, with
//!   a bounded check as the fallback).
//! - [`agents`], [`resolve`]: agents, assignments, resolution, catalog, lock.
//! - [`ui_sessions`]: the web UI's sessions and shared keys, in the
//!   database (every replica sees them).
//! - [`audit`], [`gc`]: the audit log and blob collection.
//! - [`health`]: readiness (`/readyz`: database, migrations, store).
//! - [`browse`]: the web UI's skill lists (totals, filters, sort).
//! - [`test_run`]: test runs of a version in this host's sandbox, through
//!   a [`TestRunner`](runner::TestRunner) the binary supplies;
//!   [`rate`]: their per-principal rate limit.
//! - [`metrics`]: the Prometheus metrics `/metrics` serves.

pub mod agents;
pub mod audit;
pub mod browse;
pub mod cache;
pub mod config;
pub mod cursor;
pub(crate) mod fresh;
pub mod gc;
pub mod glob;
pub mod health;
pub mod metrics;
pub mod principal;
pub mod publish;
pub mod rate;
pub mod registry;
pub mod resolve;
pub mod review;
pub mod runner;
pub mod signing;
pub mod skills;
pub mod staging;
pub mod state;
pub mod store;
pub mod test_run;
pub mod throttle;
pub mod tokens;
pub mod ui_sessions;
pub mod well_known;
