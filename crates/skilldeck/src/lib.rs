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

pub mod activation;
pub mod bundled;
pub mod catalog;
pub mod config;
pub mod deck;
pub mod diagnostic;
pub mod discovery;
pub mod error;
pub mod frontmatter;
mod fs;
pub mod index;
pub mod limits;
mod lints;
pub mod load;
pub mod name;
pub mod resources;
pub mod scaffold;
pub mod search;
pub mod skill;
pub mod validate;
pub mod walk;
pub mod yaml;

pub use activation::{Activation, ActivationFormat, ActivationOptions, activate, activate_with};
pub use catalog::{
    Budget, Catalog, CatalogFormat, CatalogOptions, Encoding, Explanation, count_tokens,
    render as render_catalog,
};
pub use config::Config;
pub use deck::{Deck, Shadowed};
pub use diagnostic::{Code, Diagnostic, Pos, Severity};
pub use discovery::{DiscoveryOptions, ExplicitSkill, Root, discover};
pub use error::{Error, ResourceProblem};
pub use fs::dirs;
pub use fs::stamp::FileStamp;
pub use load::{SkillReport, validate_dir, validate_path};
pub use name::{NameCharset, SkillName};
pub use resources::{
    Resource, ResourceContent, ResourceEntry, ResourceList, list_resources, read_resource,
};
pub use search::{Hit, Lookup, SearchIndex, SearchQuery, did_you_mean, lookup, require, suggest};
pub use skill::{Scope, Skill, SkillMode};
pub use validate::{Checked, Frontmatter, Mode, ValidationOptions, check_text};
pub use walk::{FoundSkill, WalkLimits, WalkOutcome, find_skill_dirs};

use std::path::PathBuf;

use rayon::prelude::*;

/// Validates many skill folders in parallel; reports come back in the order
/// of `dirs`.
pub fn validate_many(dirs: &[PathBuf], options: &ValidationOptions) -> Vec<SkillReport> {
    dirs.par_iter()
        .map(|dir| validate_dir(dir, options))
        .collect()
}
