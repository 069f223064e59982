//! # skilldeck-audit
//!
//! A static risk audit of Agent Skills: every file of a skill, its prose
//! included, checked for what malicious skills do (download and execute,
//! fake prerequisites, obfuscated code, secrets read and sent, reverse
//! shells and persistence, crypto mining, prompt injection, instructions to
//! turn off approvals or sandboxes, requests for secrets, network use the
//! skill does not declare) and for what cannot be analysed (binaries,
//! archives, minified or encrypted files), which is reported as such,
//! never as clean.
//!
//! Each [`Finding`] has a stable `code` ([`rules::RULES`]), a [`Severity`],
//! a [`Class`], the file, line and column, the evidence (secrets redacted
//! by the core's rules, [`skilldeck::secret::redact_secrets`]) and a
//! message; a skill's [`Verdict`] is its worst finding that is not
//! allowed ([`AllowList`]), or `clean`.
//!
//! - [`audit_skill`] audits a folder; [`audit_files`] audits files already
//!   in memory (an upload, an unpacked package) without reading anything.
//! - Findings serialize with serde (the registry stores them).
//! - With an [`IndexCheck`] ([`AuditOptions::index`]) declared packages
//!   are looked up on a package index (`deps.not-on-index`); without one
//!   the audit never uses the network.
//! - Every limit is in [`limits`].
//!
//! The rule sets are compiled once per process (a `LazyLock`); one pass of
//! a regex set over each file finds which rules match at all.

#![deny(missing_docs)]

mod allow;
mod audit;
mod content;
pub mod deps;
mod error;
mod finding;
mod hosts;
pub mod index;
pub mod limits;
mod patterns;
pub mod rules;
pub mod sarif;
mod scan;
mod text;
mod unicode;

pub use allow::AllowList;
pub use audit::{AuditOptions, SkillFile, audit_files, audit_skill};
pub use error::Error;
pub use finding::{Class, Finding, Severity, SkillAudit, Verdict};
pub use index::{IndexCheck, IndexSources, Lookup, PythonIndex};
pub use rules::{RULES, Rule};
