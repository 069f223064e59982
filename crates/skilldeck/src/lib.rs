//! # skilldeck
//!
//! The core of skilldeck, an engine for [Agent Skills](https://agentskills.io):
//! folders with a `SKILL.md` (YAML frontmatter plus Markdown instructions).
//!
//! This crate is synchronous and has no async runtime or server dependency.
//! It parses and validates skills in two modes sharing one rule set:
//! [`Mode::Strict`] (the specification) and [`Mode::Lenient`] (how hosts
//! should load real-world skills). Every problem is a [`Diagnostic`] with a
//! stable [`Code`], a [`Severity`] and a file position; one bad skill never
//! hides the others.
//!
//! ```
//! use skilldeck::{check_text, ValidationOptions};
//!
//! let text = "---\nname: demo\ndescription: Demo skill. Use when testing.\n---\n# Demo\n";
//! let checked = check_text(text, None, &ValidationOptions::strict());
//! assert!(checked.diagnostics.is_empty());
//! assert_eq!(checked.frontmatter.unwrap().name.as_deref(), Some("demo"));
//! ```

#![deny(missing_docs)]

pub mod activation;
pub mod catalog;
pub mod deck;
mod diagnostic;
pub mod digest;
pub mod environment;
mod error;
pub mod fs;
pub mod limits;
pub mod plugin;
pub mod resources;
mod scaffold;
pub mod search;
pub mod secret;
mod skill;
pub mod spec;
pub mod text;
mod tokenizer;

pub use activation::{
    Activation, ActivationFormat, ActivationOptions, DynamicContext, activate, activate_with,
    activate_with_dynamic,
};
pub use catalog::{
    Budget, BudgetOverride, Catalog, CatalogFormat, CatalogOptions, CatalogSummary, Encoding,
    Explanation, OwnedCatalog, count_tokens, render as render_catalog,
};
pub use deck::{
    BundledMode, Config, ConfigLayers, Deck, DiscoveryOptions, EligibilityContext, ExplicitSkill,
    Ineligible, Root, RootReport, Shadowed, discover, skill_folders,
};
pub use diagnostic::{Code, Diagnostic, Pos, Severity};
pub use digest::{
    DIGEST_PREFIX, Digest, DigestError, DigestWriter, FileDigest, ManifestDiff, SkillManifest,
    fingerprint, lowercase_hex, sha256_digest,
};
pub use error::{Error, ResourceProblem, UpstreamProblem};
pub use fs::{FileStamp, FoundSkill, WalkLimits, WalkOutcome, dirs, find_skill_dirs};
pub use resources::{
    Resource, ResourceContent, ResourceEntry, ResourceList, list_resources, read_resource,
};
pub use scaffold::{SCAFFOLD_PLACEHOLDER, new_skill, skill_md_template};
pub use search::{Hit, Lookup, SearchIndex, SearchQuery, did_you_mean, lookup, require, suggest};
pub use skill::{HostFields, Scope, Skill, SkillMode};
pub use spec::{
    Checked, Frontmatter, Mode, NameCharset, Requirements, SkillName, SkillReport, SkillTool,
    SkillType, ToolCall, ToolName, ValidationOptions, check_text, full_tool_name, validate_dir,
    validate_found, validate_found_many, validate_many, validate_path, validate_tree,
};
