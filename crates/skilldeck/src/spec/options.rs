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
    // skilldeck extensions: skill-defined tools and eligibility.
    "tools",
    "requires",
    // Seed 004 (LinX): its skill types, entry points (tools) and the
    // capabilities an agent needs.
    "skill_type",
    "entry_points",
    "required_capabilities",
];

/// Where a host field's spec form lives, for the strict-mode
/// `unknown-field` help: the fields seed 004 writes, each with the form
/// the specification (or skilldeck) gives the same thing.
pub const HOST_FIELD_FORMS: &[(&str, &str)] = &[
    (
        "entry_points",
        "seed 004's entry points: skilldeck offers each as the tool `{skill}__{entry}`; the spec-compatible form is skilldeck's `tools:` list (name, description, parameters, run)",
    ),
    (
        "required_capabilities",
        "seed 004's capabilities: the spec-compatible form is `metadata: {capabilities: \"a b\"}`",
    ),
    (
        "skill_type",
        "seed 004's skill type (agent_skill or langchain_tool): the spec has none; an agent skill needs no type, and a LangChain tool package is read only by hosts that know the field",
    ),
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
    /// Codes not reported (`--allow CODE`, `[validate] allow`). A code that
    /// makes a skill unusable cannot be allowed ([`ValidationOptions::can_allow`]).
    pub allow: Vec<Code>,
    /// Codes reported as errors even where they are warnings (`--deny CODE`,
    /// `[validate] deny`). Deny wins over allow.
    pub deny: Vec<Code>,
    /// Report errors only (`--quiet`): warnings are dropped.
    pub quiet: bool,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        ValidationOptions {
            mode: Mode::default(),
            charset: NameCharset::default(),
            allowed_fields: Vec::new(),
            max_skill_md_bytes: MAX_SKILL_MD_BYTES,
            lints: true,
            allow: Vec::new(),
            deny: Vec::new(),
            quiet: false,
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

    /// The severity `code` gets with these options, or `None` when it is not
    /// reported. The one place that grades a code: the mode's severity
    /// first, then `deny` (a warning becomes an error), then `allow` (not
    /// reported, unless the code makes a skill unusable) and `quiet` (a
    /// warning is not reported).
    pub fn severity(&self, code: Code) -> Option<Severity> {
        if self.deny.contains(&code) {
            return Some(Severity::Error);
        }
        if self.allow.contains(&code) && Self::can_allow(code) {
            return None;
        }
        let severity = Self::mode_severity(self.mode, code);
        (!(self.quiet && severity == Severity::Warning)).then_some(severity)
    }

    /// Whether `code` may be allowed: every code but those that make a skill
    /// unusable in any mode (no frontmatter, no description, unreadable).
    pub fn can_allow(code: Code) -> bool {
        !Self::unusable(code)
    }

    fn unusable(code: Code) -> bool {
        use Code::*;
        matches!(
            code,
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
                | DescriptionNotString
        )
    }

    /// The severity of `code` in `mode`, before `allow`, `deny` and `quiet`.
    pub fn mode_severity(mode: Mode, code: Code) -> Severity {
        use Code::*;
        if Self::unusable(code) {
            return Severity::Error;
        }
        match code {
            // Advisory in any mode.
            Bom | SkillMdLowercase | YamlRecovered | WalkLimit | BodyTooLong
            | BodyTooManyTokens | BrokenLink | NestedReference | DescriptionNoTrigger => {
                Severity::Warning
            }
            // Spec violations, and a scaffold's placeholder left in place:
            // errors in strict, warnings in lenient.
            _ => match mode {
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
    /// Where a diagnostic that is not reported goes, so callers can still
    /// set its help; overwritten by the next one.
    discarded: Diagnostic,
}

impl<'o> Sink<'o> {
    pub(crate) fn new(options: &'o ValidationOptions) -> Self {
        Sink {
            options,
            diagnostics: Vec::new(),
            discarded: Diagnostic::new(Code::WalkLimit, Severity::Warning, String::new()),
        }
    }

    pub(crate) fn push(
        &mut self,
        code: Code,
        pos: Option<Pos>,
        message: String,
    ) -> &mut Diagnostic {
        let Some(severity) = self.options.severity(code) else {
            self.discarded = Diagnostic::new(code, Severity::Warning, message);
            return &mut self.discarded;
        };
        let mut d = Diagnostic::new(code, severity, message);
        if let Some(pos) = pos {
            d = d.at(pos);
        }
        self.diagnostics.push(d);
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    /// Whether a diagnostic with `code` would be reported: a check whose
    /// codes are all unreported need not run.
    pub(crate) fn reports(&self, code: Code) -> bool {
        self.options.severity(code).is_some()
    }

    pub(crate) fn add(&mut self, mut d: Diagnostic) {
        if let Some(severity) = self.options.severity(d.code) {
            d.severity = severity;
            self.diagnostics.push(d);
        }
    }
}

pub(crate) fn help(d: &mut Diagnostic, text: impl Into<String>) {
    d.help = Some(text.into());
}
