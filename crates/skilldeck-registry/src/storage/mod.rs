//! The registry's storage layer: every SQL statement, one file per
//! concern, for SQLite and PostgreSQL alike (sqlx `any`, `$n` parameters,
//! text times, JSON as text). The service above decides who may do what
//! and what the audit line says; this layer only reads and writes rows.
//!
//! - [`db`]: the database ([`Db`](db::Db): opening, migrations, reads on
//!   the pool) and a write ([`Write`](db::Write): one transaction that
//!   first bumps the database generation, so writes are serialised and
//!   each gets a fresh number, the audit id).
//! - [`skills`], [`versions`], [`labels`]: skills, their immutable
//!   versions with files, and the labels pointing at versions.
//! - [`agents`]: agents and their assignments.
//! - [`tokens`]: bearer tokens (hashes, scopes, lifecycle times).
//! - [`audit`]: the audit log.
//!
//! Reads that a service operation needs inside its write (for
//! atomicity) take the [`Write`](db::Write); the others take the
//! [`Db`](db::Db). A function never opens a transaction of its own: a
//! write's atomicity is the service operation's, visible in its body
//! (`begin_write` ... `commit`).

pub(crate) mod agents;
pub(crate) mod audit;
pub(crate) mod db;
pub(crate) mod labels;
pub(crate) mod skills;
pub(crate) mod tokens;
pub(crate) mod versions;
