//! The specification's rules: splitting the frontmatter (`frontmatter.rs`),
//! reading its YAML with positions (`yaml.rs`), the naming rules (`name.rs`) and the slug rule they share with registry
//! names (`slug.rs`),
//! one check per field (`fields.rs`), the advisory lints (`lints.rs`), the
//! mode and options (`options.rs`), control characters (`control.rs`), the whole rule set over one text
//! (`validate.rs`) and over one folder (`folder.rs`).

pub(crate) mod control;
pub(crate) mod fields;
pub(crate) mod folder;
pub(crate) mod frontmatter;
pub(crate) mod lints;
pub(crate) mod name;
pub(crate) mod options;
pub mod plugin_name;
pub(crate) mod requires;
pub(crate) mod slug;
pub(crate) mod tools;
pub(crate) mod validate;
pub(crate) mod yaml;

pub use control::{
    REPLACEMENT, first_control, has_control, is_control, may_hold_control, replace_controls,
    replace_controls_with,
};
pub use fields::{Frontmatter, SkillType};
pub use folder::{
    SkillReport, validate_dir, validate_found, validate_found_many, validate_many, validate_path,
    validate_tree,
};
pub use frontmatter::{Split, split as split_frontmatter};
pub use name::{
    NameCharset, NameProblem, SkillName, check as check_name, lookalike_key,
    normalize as normalize_name, suggest as suggest_name,
};
pub use options::{HOST_FIELD_FORMS, KNOWN_HOST_FIELDS, Mode, SPEC_FIELDS, ValidationOptions};
pub use requires::{REQUIRES_KEYS, REQUIRES_METADATA_KEYS, Requirements};
pub use slug::{SLUG_PATTERN, SlugProblem, is_slug, slug_problem};
pub use tools::{
    FULL_NAME_SEPARATOR, SkillTool, ToolCall, ToolName, ToolNameError, entry_point_schema,
    full_tool_name,
};
pub use validate::{Checked, check_text, is_valid};
pub use yaml::{Key, Node, NodeKind, Repair, YamlError, repair_unquoted_colons, to_json};
