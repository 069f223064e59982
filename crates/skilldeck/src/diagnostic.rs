//! Diagnostics: every problem found, with a stable code, a severity and a
//! position in the file.

use std::fmt;
use std::path::PathBuf;

use serde::{Serialize, Serializer};

/// How bad a problem is. Errors make a skill invalid (strict) or unloadable
/// (lenient); warnings never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Advisory: the skill works, but could be better.
    Warning,
    /// The skill is invalid (strict) or cannot be loaded (lenient).
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// A stable, kebab-case identifier for each kind of problem.
        ///
        /// The text form (`Code::as_str`) is part of the public interface:
        /// CI scripts match on it, so it never changes once released.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable kebab-case text of this code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }

            /// The code whose text is `text` (`"broken-link"`), if any.
            pub fn parse(text: &str) -> Option<Code> {
                match text {
                    $($text => Some(Code::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

codes! {
    /// The path given does not exist.
    PathNotFound = "path-not-found",
    /// The path given is neither a folder nor a `SKILL.md`.
    NotADirectory = "not-a-directory",
    /// The folder has no `SKILL.md`.
    MissingSkillMd = "missing-skill-md",
    /// `SKILL.md` is spelled `skill.md`.
    SkillMdLowercase = "skill-md-lowercase",
    /// `SKILL.md` is a FIFO, device, socket or folder.
    NotAFile = "not-a-file",
    /// `SKILL.md` (or a folder on the way) is a symlink to nothing.
    BrokenSymlink = "broken-symlink",
    /// Following symlinks leads back to where it started.
    SymlinkLoop = "symlink-loop",
    /// Reading failed (permissions, I/O error).
    ReadError = "read-error",
    /// A tree walk stopped at its folder limit.
    WalkLimit = "walk-limit",
    /// `SKILL.md` is larger than the read limit.
    FileTooLarge = "file-too-large",
    /// `SKILL.md` is not valid UTF-8.
    NotUtf8 = "not-utf8",
    /// `SKILL.md` contains a NUL byte.
    NulByte = "nul-byte",
    /// `SKILL.md` starts with a UTF-8 byte order mark.
    Bom = "bom",
    /// `SKILL.md` does not start with a `---` line.
    NoFrontmatter = "no-frontmatter",
    /// No closing `---` line.
    UnclosedFrontmatter = "unclosed-frontmatter",
    /// The frontmatter block is larger than its limit.
    FrontmatterTooLarge = "frontmatter-too-large",
    /// The frontmatter is not valid YAML (or exceeds the YAML budgets).
    InvalidYaml = "invalid-yaml",
    /// The YAML was invalid, loaded after quoting values that hold `: `.
    YamlRecovered = "yaml-recovered",
    /// The frontmatter is YAML, but not a mapping.
    FrontmatterNotMapping = "frontmatter-not-mapping",
    /// A field outside the specification.
    UnknownField = "unknown-field",
    /// No `name`.
    NameMissing = "name-missing",
    /// `name` is empty.
    NameEmpty = "name-empty",
    /// `name` is a list or mapping.
    NameNotString = "name-not-string",
    /// `name` is longer than 64 characters.
    NameTooLong = "name-too-long",
    /// `name` has uppercase letters.
    NameNotLowercase = "name-not-lowercase",
    /// `name` starts or ends with `-`.
    NameHyphenEdge = "name-hyphen-edge",
    /// `name` contains `--`.
    NameConsecutiveHyphens = "name-consecutive-hyphens",
    /// `name` has characters other than letters, digits and `-`.
    NameInvalidChars = "name-invalid-chars",
    /// `name` differs from the folder name.
    NameDirMismatch = "name-dir-mismatch",
    /// No `description`.
    DescriptionMissing = "description-missing",
    /// `description` is empty.
    DescriptionEmpty = "description-empty",
    /// `description` is a list or mapping.
    DescriptionNotString = "description-not-string",
    /// `description` is longer than 1024 characters.
    DescriptionTooLong = "description-too-long",
    /// `compatibility` is empty.
    CompatibilityEmpty = "compatibility-empty",
    /// `compatibility` is longer than 500 characters.
    CompatibilityTooLong = "compatibility-too-long",
    /// `compatibility` is a list or mapping.
    CompatibilityNotString = "compatibility-not-string",
    /// `license` is a list or mapping.
    LicenseNotString = "license-not-string",
    /// `metadata` is not a mapping.
    MetadataNotMap = "metadata-not-map",
    /// A `metadata` value is not a string.
    MetadataValueNotString = "metadata-value-not-string",
    /// `allowed-tools` is not a space-separated string.
    AllowedToolsNotString = "allowed-tools-not-string",
    /// A text field (`name`, `description`, `compatibility`, `license`, a
    /// `metadata` value) holds a control character: C0 or C1 controls
    /// (ESC, BEL, NUL, ...), DEL, or a bidi control (U+202E, ...); in a
    /// name also a tab or line break.
    ControlCharacter = "control-character",
    /// Lint: the body is over 500 lines.
    BodyTooLong = "body-too-long",
    /// Lint: the body is over about 5,000 tokens.
    BodyTooManyTokens = "body-too-many-tokens",
    /// Lint: a relative link names a file the skill does not contain.
    BrokenLink = "broken-link",
    /// Lint: a file linked from `SKILL.md` links on to further files.
    NestedReference = "nested-reference",
    /// Lint: the description never says when to use the skill.
    DescriptionNoTrigger = "description-no-trigger",
    /// The description or body still holds the scaffold's placeholder
    /// (`TODO:` at the start of the description or of a line).
    PlaceholderText = "placeholder-text",
    /// Discovery: a same-named skill of higher precedence wins.
    ShadowedSkill = "shadowed-skill",
    /// `tools` is neither a list of tool mappings nor another host's list
    /// of tool names.
    ToolsNotList = "tools-not-list",
    /// A `tools` entry is not a mapping, or has a key other than `name`,
    /// `description`, `parameters`, `input_schema` and `run`.
    ToolInvalid = "tool-invalid",
    /// A tool name is missing or does not match `^[a-z][a-z0-9_]*$`.
    ToolNameInvalid = "tool-name-invalid",
    /// Two tools of one skill share a name.
    ToolNameDuplicate = "tool-name-duplicate",
    /// The full tool name `{skill}__{tool}` is over 64 characters.
    ToolFullNameTooLong = "tool-full-name-too-long",
    /// A tool has no `description`.
    ToolDescriptionMissing = "tool-description-missing",
    /// A tool's `run` is given but names nothing.
    ToolRunMissing = "tool-run-missing",
    /// A tool without `run` (the host implements it) has no handler
    /// registered with this host: it is not offered.
    ToolHandlerMissing = "tool-handler-missing",
    /// A tool's `run` leads outside the skill folder.
    ToolRunEscapes = "tool-run-escapes",
    /// A tool's `run` names no regular file in the skill folder.
    ToolRunNotFound = "tool-run-not-found",
    /// A tool's `parameters` or `input_schema` is not a well-formed JSON
    /// Schema of an object.
    ToolSchemaInvalid = "tool-schema-invalid",
    /// A tool gives both `parameters` and `input_schema`.
    ToolSchemaConflict = "tool-schema-conflict",
    /// Seed 004's `entry_points` is not a mapping of entry names to
    /// scripts, or an entry has a key other than `run` and `description`.
    ToolEntryPointsInvalid = "tool-entry-points-invalid",
    /// A LangChain tool package (`skill_type: langchain_tool`) could not
    /// be described by the sandboxed worker (an import error, no tool
    /// found, a schema that is not an object), or one of its tools was
    /// left out: nothing of it is offered.
    ToolPackageFailed = "tool-package-failed",
    /// Seed 004's `skill_type` is neither `agent_skill` nor
    /// `langchain_tool`.
    SkillTypeInvalid = "skill-type-invalid",
    /// `required_capabilities` (or `metadata.capabilities`) is not a list
    /// of words.
    CapabilitiesInvalid = "capabilities-invalid",
    /// A `requires` block (top-level, or `metadata.openclaw.requires` and
    /// its aliases) is malformed.
    RequiresInvalid = "requires-invalid",
    // Packages (issue 14): pack, unpack, install, lockfile. One block.
    /// Package: an entry's path is absolute, holds `..`, a backslash, a NUL
    /// or control character, an empty component, or is not UTF-8.
    PackageUnsafePath = "package-unsafe-path",
    /// Package: a symlink or hardlink entry (or a symlink in a folder
    /// being packed or installed).
    PackageLink = "package-link",
    /// Package: a device, FIFO, socket or other non-regular entry.
    PackageSpecialFile = "package-special-file",
    /// Package: two entries with the same name, or names equal but for
    /// letter case.
    PackageDuplicate = "package-duplicate",
    /// Package: more files (or entries) than the limit.
    PackageTooManyFiles = "package-too-many-files",
    /// Package: more unpacked bytes than the limit.
    PackageTooLarge = "package-too-large",
    /// Package: unpacked bytes beyond the compression-ratio bound.
    PackageRatio = "package-ratio",
    /// Package: the archive ends early or is corrupt.
    PackageTruncated = "package-truncated",
    /// Package: not a tar.gz or zip, or a feature it needs (encryption,
    /// an unknown compression method) is not supported.
    PackageFormat = "package-format",
    /// Package: not exactly one skill (`SKILL.md` at the root, or under one
    /// top folder named like the skill).
    PackageLayout = "package-layout",
    /// Install: the installed skill has local edits (it does not match its
    /// lock entry), or was not installed by skilldeck.
    InstallLocalEdits = "install-local-edits",
    /// Lockfile: what is installed or given does not match the lock.
    LockMismatch = "lock-mismatch",
    // Skill environments (issue 31): dependencies built outside the sandbox.
    /// Environment: a line of a skill's `requirements.txt` (or an entry of
    /// `pyproject.toml`'s `[project].dependencies`) is not a plain
    /// requirement (an option such as `--index-url`, a path or URL, a
    /// malformed name); the operator chooses where packages come from.
    EnvironmentRequirementInvalid = "environment-requirement-invalid",
    /// Environment: a skill's dependencies could not be resolved or
    /// installed (a package not on the index, no matching version, no
    /// network when not offline); the message names the requirement.
    EnvironmentBuildFailed = "environment-build-failed",
    /// Environment: a skill declares dependencies, but its environment is
    /// not built (never installed, not in the lock, or removed from the
    /// store): its scripts do not run and its tools are not offered.
    EnvironmentMissing = "environment-missing",
    /// Environment: the built environment differs from what the lock
    /// records (a package missing, another version, a file changed).
    EnvironmentModified = "environment-modified",
    // Plugins (issue 30): Claude Code and Codex plugins and marketplaces.
    /// Plugin: `plugin.json` is not valid JSON, or a field has the wrong
    /// type, or `name` is missing.
    PluginManifestInvalid = "plugin-manifest-invalid",
    /// Plugin: a plugin's name is not a slug (it namespaces its skills).
    PluginNameInvalid = "plugin-name-invalid",
    /// Plugin: a path in a manifest or marketplace leaves its folder
    /// (absolute, `..`, or a symlink leading out).
    PluginPathEscape = "plugin-path-escape",
    /// Marketplace: `marketplace.json` is not valid JSON, lacks its
    /// `plugins` list, or an entry lacks a name or a source.
    MarketplaceInvalid = "marketplace-invalid",
    /// Export: the output folder is not empty (and `--force` was not
    /// given).
    ExportNotEmpty = "export-not-empty",
    /// Export: the root holds no skill to export.
    ExportNoSkills = "export-no-skills",
}

impl Code {
    /// True for the problems of a declared tool (`tool-*`, `tools-*`): a
    /// skill that has one still loads, without that tool.
    pub fn is_tool_problem(self) -> bool {
        self.as_str().starts_with("tool")
    }

    /// True for a problem of a skill's environment (its declared
    /// dependencies: `environment-*`).
    pub fn is_environment_problem(self) -> bool {
        self.as_str().starts_with("environment-")
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Code::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown code '{text}'; valid codes: {}",
                Code::valid_list()
            ))
        })
    }
}

impl Code {
    /// Every code's text, comma-separated (for "valid codes: ..." messages).
    pub fn valid_list() -> String {
        Code::ALL
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One problem, located in a file.
///
/// `line` and `column` are 1-based and count characters in the real file
/// (frontmatter and body offsets already applied); both are `None` for
/// problems that concern a folder or a whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable kebab-case code.
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// Human-readable message (keeps the reference validator's wording).
    pub message: String,
    /// The file the position refers to.
    pub file: Option<PathBuf>,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column, in characters.
    pub column: Option<u32>,
    /// Characters to underline from `column` (at least 1 when rendered).
    #[serde(skip)]
    pub len: u32,
    /// How to fix it, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

impl Diagnostic {
    /// A new diagnostic with no position.
    pub fn new(code: Code, severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity,
            message: message.into(),
            file: None,
            line: None,
            column: None,
            len: 0,
            help: None,
        }
    }

    /// Sets the file.
    pub fn in_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// Sets the position (1-based line and column) and underline length.
    pub fn at(mut self, pos: Pos) -> Self {
        self.line = Some(pos.line);
        self.column = Some(pos.column);
        self.len = pos.len;
        self
    }

    /// Sets the fix-it hint.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
                if let Some(column) = self.column {
                    write!(f, ":{column}")?;
                }
            }
            f.write_str(": ")?;
        }
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)
    }
}

/// A position in a file: 1-based line and column (characters), and how many
/// characters the problem spans on that line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// Characters covered (0 = unknown).
    pub len: u32,
}

impl Pos {
    /// A position at `line`:`column`, covering `len` characters.
    pub const fn new(line: u32, column: u32, len: u32) -> Self {
        Pos { line, column, len }
    }

    /// The start of `line`.
    pub fn line(line: u32) -> Self {
        Pos::new(line, 1, 0)
    }

    /// The 1-based line and character column of byte `offset` of `text`
    /// (clamped to its end), covering nothing. Bytes before `offset` that
    /// are not UTF-8 count one column each run, as a lossy decode shows
    /// them. The one place a byte offset becomes a position.
    pub(crate) fn of_offset(text: &[u8], offset: usize) -> Self {
        let before = &text[..offset.min(text.len())];
        let line = memchr::memchr_iter(b'\n', before).count() + 1;
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        Pos::new(
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
            0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Pos;

    #[test]
    fn a_byte_offset_is_a_line_and_a_column_in_characters() {
        let text = "ab\ncé😀x\n".as_bytes();
        assert_eq!(Pos::of_offset(text, 0), Pos::new(1, 1, 0));
        assert_eq!(Pos::of_offset(text, 2), Pos::new(1, 3, 0));
        assert_eq!(Pos::of_offset(text, 3), Pos::new(2, 1, 0));
        // 'x' follows a 1-, a 2- and a 4-byte character: column 4.
        let x = text.iter().position(|&b| b == b'x').unwrap();
        assert_eq!(Pos::of_offset(text, x), Pos::new(2, 4, 0));
        // Past the end is the end.
        assert_eq!(Pos::of_offset(text, 999), Pos::new(3, 1, 0));
        // Bytes that are not UTF-8 count as a lossy decode shows them.
        assert_eq!(Pos::of_offset(b"a\xff\xfeb", 3), Pos::new(1, 4, 0));
    }
}
