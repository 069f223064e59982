//! Every limit the engine enforces, in one place.
//!
//! Each is a named constant so a reader can find it, and the ones a user may
//! want to change are copied into [`crate::ValidationOptions`].

/// Longest `SKILL.md` we read (bytes). Larger files are reported as
/// `file-too-large` without being read past this cap.
pub const MAX_SKILL_MD_BYTES: u64 = 1024 * 1024;

/// Longest frontmatter block (bytes between the two `---` lines).
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Spec: `name` is 1–64 characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Spec: `description` is 1–1024 characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Spec: `compatibility` is 1–500 characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// Spec advice: keep `SKILL.md` under 500 lines.
pub const MAX_BODY_LINES: usize = 500;

/// Spec advice: instructions under 5,000 tokens.
pub const MAX_BODY_TOKENS: usize = 5_000;

/// Characters per token for the body-size lint's estimate (the usual
/// rule of thumb for English prose and code with BPE tokenizers).
pub const CHARS_PER_TOKEN_ESTIMATE: usize = 4;

/// How many files linked from `SKILL.md` the nested-reference lint opens.
pub const MAX_LINT_LINKED_FILES: usize = 64;

/// How much of each linked file the nested-reference lint reads (bytes).
pub const MAX_LINT_LINKED_FILE_BYTES: u64 = 256 * 1024;

/// YAML budget: most nodes (scalars, sequences, mappings) in one frontmatter,
/// counting every alias expansion. Stops "billion laughs" alias bombs.
pub const MAX_YAML_NODES: usize = 20_000;

/// YAML budget: deepest nesting of sequences and mappings.
pub const MAX_YAML_DEPTH: usize = 32;

/// YAML budget: most alias references (`*a`) in one frontmatter.
pub const MAX_YAML_ALIASES: usize = 1_000;

/// `validate -r`: deepest folder level searched below each path.
pub const MAX_WALK_DEPTH: usize = 16;

/// `validate -r`: most folders visited below each path.
pub const MAX_WALK_DIRS: usize = 100_000;

/// Discovery: deepest folder level searched below each root.
pub const MAX_DISCOVERY_DEPTH: usize = 6;

/// Discovery: bytes read at a time while looking for the end of the
/// frontmatter (the body is never read during discovery).
pub const FRONTMATTER_READ_CHUNK: usize = 4096;

/// Activation cache: default number of rendered activations kept.
pub const CONTENT_CACHE_CAPACITY: usize = 256;

/// Catalog: descriptions are never shortened below this many characters
/// (the "…" included) before skills are reduced to their name.
pub const CATALOG_DESCRIPTION_FLOOR_CHARS: usize = 60;

/// Catalog: the smallest floor accepted (one character plus "…"); lower
/// values given in options are raised to it.
pub const CATALOG_MIN_FLOOR_CHARS: usize = 2;
