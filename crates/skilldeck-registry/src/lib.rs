//! # skilldeck-registry
//!
//! Skills for a fleet of agents: immutable versions with movable labels,
//! agents with assignments, and each agent's resolved catalog and lock.
//! The wire types ([`wire`]) are shared by the server, the clients and the
//! web UI; the server needs the `server` feature (on by default).

#![warn(missing_docs)]

pub mod client;
pub mod names;
pub mod wire;
