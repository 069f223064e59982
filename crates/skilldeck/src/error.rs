//! The library's error type, for API calls that fail as a whole (validation
//! problems are [`crate::Diagnostic`]s, not errors).

use std::path::PathBuf;

/// One broken name rule: its code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameProblem {
    /// Stable code (`name-too-long`, ...).
    pub code: crate::diagnostic::Code,
    /// Message in the reference validator's wording.
    pub message: String,
}

/// Everything that can fail in the core library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A skill name broke the naming rules.
    #[error("invalid skill name '{name}': {}", problems.iter().map(|p| p.message.as_str()).collect::<Vec<_>>().join("; "))]
    InvalidName {
        /// The name as given.
        name: String,
        /// Every rule it broke.
        problems: Vec<NameProblem>,
    },
    /// A config file is malformed.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// A path that must not exist does.
    #[error("{} already exists", .0.display())]
    AlreadyExists(PathBuf),
    /// A skill resource could not be read or listed: the path was refused,
    /// leaves the skill folder, or names no readable regular file.
    #[error("skill '{skill}', resource '{}': {problem}", path.escape_debug())]
    Resource {
        /// The skill's name.
        skill: String,
        /// The relative path as requested (shown with escapes, so a NUL or
        /// control character is visible).
        path: String,
        /// What is wrong.
        problem: ResourceProblem,
    },
    /// No skill has this name. The message says why when discovery skipped
    /// a folder of that name (its error, with file and line), else offers
    /// close names ("did you mean ...?"). This is the one unknown-skill
    /// message every face shows.
    #[error("{}", unknown_skill_message(name, reason.as_deref(), suggestions))]
    UnknownSkill {
        /// The name as given.
        name: String,
        /// The error that kept a skill folder of this name out of the deck.
        reason: Option<Box<crate::diagnostic::Diagnostic>>,
        /// Close names, best first (may be empty).
        suggestions: Vec<String>,
    },
    /// The skill exists but its mode is `off`: it is not served.
    #[error("skill '{0}' is turned off (mode \"off\" in the config)")]
    SkillOff(String),
    /// The skill exists but this machine lacks what it `requires` (a
    /// binary on PATH, an environment variable, the OS, a host setting): it
    /// is not served.
    #[error("skill '{name}' is not available here: it {reason}")]
    SkillIneligible {
        /// The skill.
        name: String,
        /// The unmet condition (`needs 'jq' on PATH (requires.bins)`).
        reason: String,
    },
    /// A skill's `SKILL.md` could not be read or split on activation.
    #[error("cannot activate skill '{name}': {diagnostic}")]
    Activation {
        /// The skill.
        name: String,
        /// What went wrong, located in the file.
        diagnostic: Box<crate::diagnostic::Diagnostic>,
    },
    /// A skill's frontmatter could not be read again from its `SKILL.md`
    /// ([`crate::Skill::frontmatter`]).
    #[error("cannot read the frontmatter of skill '{name}': {diagnostic}")]
    Frontmatter {
        /// The skill.
        name: String,
        /// What went wrong, located in the file.
        diagnostic: Box<crate::diagnostic::Diagnostic>,
    },
    /// A skill another MCP server (an upstream of the gateway) serves was
    /// refused: its listing or its files did not verify.
    #[error("skill '{skill}' from upstream '{upstream}' refused ({}): {message}", problem.code())]
    Upstream {
        /// The upstream's name (the namespace of its skills).
        upstream: String,
        /// The skill, as the upstream names it.
        skill: String,
        /// What was wrong, as a stable code.
        problem: UpstreamProblem,
        /// What was wrong, in words (declared and received values).
        message: String,
    },
    /// The argument string passed to an activation is over its limit.
    #[error("arguments for skill '{name}' are {len} bytes; the limit is {limit}")]
    ArgumentsTooLong {
        /// The skill.
        name: String,
        /// Bytes given.
        len: usize,
        /// The limit (bytes).
        limit: usize,
    },
    /// Substituting the arguments would make the body larger than its limit.
    #[error("skill '{name}' with these arguments would be over the {limit} byte limit")]
    ActivationTooLarge {
        /// The skill.
        name: String,
        /// The limit (bytes).
        limit: usize,
    },
    /// A value given for an option is not one of the accepted ones.
    #[error("unknown {what} '{value}' (expected {expected})")]
    InvalidValue {
        /// What the value is for (`catalog format`, `encoding`, ...).
        what: &'static str,
        /// The value as given.
        value: String,
        /// The accepted values.
        expected: &'static str,
    },
    /// Options that cannot be used together.
    #[error("{0}")]
    ConflictingOptions(String),
    /// A tokenizer could not be built.
    #[error("cannot build the {encoding} tokenizer: {message}")]
    Tokenizer {
        /// The encoding (`o200k_base`, ...).
        encoding: &'static str,
        /// What went wrong.
        message: String,
    },
    /// An I/O operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Why a resource path was refused or its file could not be read
/// (see [`crate::resources`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceProblem {
    /// The path is empty.
    #[error("refused: the path is empty; give a path relative to the skill folder")]
    Empty,
    /// The path is longer than [`crate::limits::MAX_RESOURCE_PATH_BYTES`].
    #[error("refused: the path is {len} bytes, over the {limit} byte limit")]
    PathTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The path holds a NUL byte.
    #[error("refused: the path contains a NUL byte")]
    NulByte,
    /// A `..` component.
    #[error(
        "refused: '..' is not allowed in resource paths (they must stay inside the skill folder)"
    )]
    ParentComponent,
    /// An absolute path.
    #[error("refused: absolute paths are not allowed; give a path relative to the skill folder")]
    Absolute,
    /// A backslash (Windows separator, or a UNC `\\server\share` path).
    #[error("refused: '\\' is not allowed (Windows separators and UNC paths); use '/'")]
    Backslash,
    /// A Windows drive path (`C:`...).
    #[error("refused: Windows drive paths ('C:...') are not allowed")]
    DrivePath,
    /// A percent-encoded sequence (`%2e`...).
    #[error(
        "refused: percent-encoded sequences ('%XX') are not allowed; resource paths are never URL-decoded"
    )]
    PercentEncoded,
    /// After resolving symlinks, the path leads outside the skill folder,
    /// whether or not anything exists there. One message for every such
    /// path, naming no server path: a different answer for existing and
    /// missing files outside would tell a client which files exist.
    #[error("refused: the path leads outside the skill folder")]
    Escapes,
    /// A regular file with more than one hard link: another name for it
    /// may lie outside the skill folder. Admitted with `[resources]
    /// allow-hardlinks = true`.
    #[error(
        "refused: the file has other hard links, which may lie outside the skill folder (set `[resources] allow-hardlinks = true` to serve hard-linked files)"
    )]
    Hardlinked,
    /// The file changed between resolving its path and opening it.
    #[error("refused: the file changed while it was being opened")]
    Changed,
    /// Nothing at that path.
    #[error("not found in the skill folder")]
    NotFound,
    /// The path names a folder.
    #[error("is a folder, not a file; use list_resources to see the files it holds")]
    Folder,
    /// A FIFO, socket or device.
    #[error("refused: it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// Larger than the size cap.
    #[error("refused: it is {size} bytes, over the {limit} byte limit")]
    TooLarge {
        /// Its size in bytes (at least `limit + 1` when it grew while read).
        size: u64,
        /// The cap in bytes.
        limit: u64,
    },
    /// Reading failed (permissions, symlink loop, I/O error).
    #[error("cannot read: {0}")]
    Io(#[source] std::io::Error),
}

fn unknown_skill_message(
    name: &str,
    reason: Option<&crate::diagnostic::Diagnostic>,
    suggestions: &[String],
) -> String {
    match reason {
        Some(problem) => format!("skill '{name}' is not available: {problem}"),
        None => format!("unknown skill '{name}'{}", did_you_mean_suffix(suggestions)),
    }
}

/// `"; did you mean 'a', 'b' or 'c'?"`, or nothing without suggestions.
pub(crate) fn did_you_mean_suffix(suggestions: &[String]) -> String {
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("'{s}'")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [rest @ .., last] => format!("; did you mean {} or {last}?", rest.join(", ")),
    }
}

/// What was wrong with a skill an upstream MCP server serves, as a stable
/// code ([`UpstreamProblem::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpstreamProblem {
    /// Its `skills/list` entry is malformed (a bad name, URI, digest, or a
    /// file outside the skill).
    Listing,
    /// A file's content does not hash to its listed digest.
    DigestMismatch,
    /// A file's length is not its listed size.
    SizeMismatch,
    /// It is over a limit (files, bytes per file, bytes in all).
    TooLarge,
    /// Its frontmatter does not parse, does not validate, or differs from
    /// the listing's.
    Frontmatter,
    /// The fingerprint the upstream announces is not the one its files make.
    Fingerprint,
    /// The upstream could not be reached or answered with an error.
    Fetch,
}

impl UpstreamProblem {
    /// The stable code (`upstream-digest-mismatch`, ...).
    pub fn code(self) -> &'static str {
        match self {
            UpstreamProblem::Listing => "upstream-listing",
            UpstreamProblem::DigestMismatch => "upstream-digest-mismatch",
            UpstreamProblem::SizeMismatch => "upstream-size-mismatch",
            UpstreamProblem::TooLarge => "upstream-too-large",
            UpstreamProblem::Frontmatter => "upstream-frontmatter",
            UpstreamProblem::Fingerprint => "upstream-fingerprint",
            UpstreamProblem::Fetch => "upstream-fetch",
        }
    }
}
