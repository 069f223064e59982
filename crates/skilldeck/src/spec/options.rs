//! How to validate: the [`Mode`], the [`ValidationOptions`] and the
//! [`Sink`] that gives each diagnostic its severity for the mode.

use crate::diagnostic::{Code, Diagnostic, Pos, Severity};
use crate::limits::MAX_SKILL_MD_BYTES;
use crate::spec::name::NameCharset;

/// The six fields the specification defines.
pub const SPEC_FIELDS: [&str; 6] = [
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// Fields that well-known hosts (Claude Code and others) define on top of the
/// spec. Lenient mode loads them without a warning; strict mode reports them
/// unless admitted with `--allow-field` or the config's `allow-fields`.
pub const KNOWN_HOST_FIELDS: &[&str] = &[
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "effort",
    "context",
    "agent",
    "hooks",
    "paths",
];

/// Validation mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The specification, exactly: any deviation is an error.
    #[default]
    Strict,
    /// How hosts load: only unusable files and a missing/empty description
    /// are errors; everything else is a warning.
    Lenient,
}

/// Options shared by every validation entry point.
#[derive(Debug, Clone)]
pub struct ValidationOptions {
    /// Strict or lenient.
    pub mode: Mode,
    /// Unicode letters allowed in names, or ASCII only.
    pub charset: NameCharset,
    /// Extra frontmatter fields admitted in strict mode.
    pub allowed_fields: Vec<String>,
    /// Largest `SKILL.md` read, in bytes (default [`MAX_SKILL_MD_BYTES`]).
    pub max_skill_md_bytes: u64,
    /// Run the advisory lints (body size, links, description). Discovery
    /// turns them off: it reads the frontmatter only.
    pub lints: bool,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        ValidationOptions {
            mode: Mode::default(),
            charset: NameCharset::default(),
            allowed_fields: Vec::new(),
            max_skill_md_bytes: MAX_SKILL_MD_BYTES,
            lints: true,
        }
    }
}

impl ValidationOptions {
    /// Strict mode with defaults.
    pub fn strict() -> Self {
        Self::default()
    }

    /// Lenient mode with defaults.
    pub fn lenient() -> Self {
        ValidationOptions {
            mode: Mode::Lenient,
            ..Self::default()
        }
    }

    /// The severity of `code` in this mode.
    pub fn severity(&self, code: Code) -> Severity {
        use Code::*;
        match code {
            // Unusable in any mode.
            PathNotFound
            | NotADirectory
            | MissingSkillMd
            | NotAFile
            | BrokenSymlink
            | SymlinkLoop
            | ReadError
            | FileTooLarge
            | NotUtf8
            | NulByte
            | NoFrontmatter
            | UnclosedFrontmatter
            | FrontmatterTooLarge
            | InvalidYaml
            | FrontmatterNotMapping
            | DescriptionMissing
            | DescriptionEmpty
            | DescriptionNotString => Severity::Error,
            // Advisory in any mode.
            Bom | SkillMdLowercase | YamlRecovered | WalkLimit | BodyTooLong
            | BodyTooManyTokens | BrokenLink | NestedReference | DescriptionNoTrigger => {
                Severity::Warning
            }
            // Spec violations: errors in strict, warnings in lenient.
            _ => match self.mode {
                Mode::Strict => Severity::Error,
                Mode::Lenient => Severity::Warning,
            },
        }
    }
}

/// Collects diagnostics, giving each its severity for the mode.
pub(crate) struct Sink<'o> {
    pub(crate) options: &'o ValidationOptions,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl<'o> Sink<'o> {
    pub(crate) fn new(options: &'o ValidationOptions) -> Self {
        Sink {
            options,
            diagnostics: Vec::new(),
        }
    }

    pub(crate) fn push(
        &mut self,
        code: Code,
        pos: Option<Pos>,
        message: String,
    ) -> &mut Diagnostic {
        let mut d = Diagnostic::new(code, self.options.severity(code), message);
        if let Some(pos) = pos {
            d = d.at(pos);
        }
        self.diagnostics.push(d);
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    pub(crate) fn add(&mut self, mut d: Diagnostic) {
        d.severity = self.options.severity(d.code);
        self.diagnostics.push(d);
    }
}

pub(crate) fn help(d: &mut Diagnostic, text: impl Into<String>) {
    d.help = Some(text.into());
}
