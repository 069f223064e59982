//! The rule set: from `SKILL.md` text to a typed [`Frontmatter`] plus every
//! problem found. One rule set, two modes: `strict` (the specification) and
//! `lenient` (how hosts should load skills).

use std::path::Path;

use crate::diagnostic::{Code, Diagnostic, Pos, Severity};
use crate::frontmatter;
use crate::limits::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_SKILL_MD_BYTES};
use crate::lints;
use crate::name::{self, NameCharset};
use crate::yaml::{self, Key, Node, NodeKind};

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

/// The frontmatter, typed. In lenient mode fields of the wrong type are
/// coerced where the intent is clear (a list of tools) and dropped otherwise.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Frontmatter {
    /// `name`, trimmed and NFKC-normalised.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `license`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// `compatibility`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    /// `metadata`, in source order (serialised as a JSON object).
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "pairs_as_map")]
    pub metadata: Vec<(String, String)>,
    /// `allowed-tools`, split on whitespace.
    #[serde(rename = "allowed-tools", skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// Every other field, in source order.
    #[serde(skip)]
    pub extra: Vec<(String, Node)>,
}

fn pairs_as_map<S: serde::Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// What [`check_text`] found.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// The typed frontmatter, when the YAML could be read.
    pub frontmatter: Option<Frontmatter>,
    /// File line where the body starts (0 if there is no body).
    pub body_line: u32,
    /// Every problem, in file order.
    pub diagnostics: Vec<Diagnostic>,
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

fn help(d: &mut Diagnostic, text: impl Into<String>) {
    d.help = Some(text.into());
}

/// Checks the text of a `SKILL.md` in `dir` (the skill folder, used for the
/// folder-name rule and the link lints; `None` skips both).
pub fn check_text(text: &str, dir: Option<&Path>, options: &ValidationOptions) -> Checked {
    let mut sink = Sink::new(options);
    let mut text = text;
    if let Some(rest) = text.strip_prefix('\u{FEFF}') {
        text = rest;
        sink.push(
            Code::Bom,
            Some(Pos::new(1, 1, 1)),
            "SKILL.md starts with a UTF-8 byte order mark".to_owned(),
        )
        .help = Some("save the file as UTF-8 without BOM".to_owned());
    }
    if let Some(offset) = memchr::memchr(0, text.as_bytes()) {
        let pos = pos_of_offset(text, offset);
        sink.push(
            Code::NulByte,
            Some(pos),
            "SKILL.md contains a NUL byte; it is not a text file".to_owned(),
        );
        return finish(sink, None, 0);
    }
    let split = match frontmatter::split(text) {
        Ok(split) => split,
        Err(d) => {
            sink.add(d);
            return finish(sink, None, 0);
        }
    };
    let root = match parse_yaml(split.yaml, split.yaml_line, &mut sink) {
        Some(root) => root,
        None => return finish(sink, None, split.body_line),
    };
    let dir_name = dir.and_then(folder_name);
    let fm = check_fields(&root, dir_name.as_deref(), &mut sink);
    if options.lints {
        if let Some(description) = &fm.description {
            lints::description(description, description_pos(&root), &mut sink);
        }
        lints::body(split.body, split.body_line, dir, &mut sink);
    }
    finish(sink, Some(fm), split.body_line)
}

fn finish(sink: Sink<'_>, frontmatter: Option<Frontmatter>, body_line: u32) -> Checked {
    let mut diagnostics = sink.diagnostics;
    diagnostics.sort_by_key(|d| (d.line.unwrap_or(0), d.column.unwrap_or(0)));
    Checked {
        frontmatter,
        body_line,
        diagnostics,
    }
}

/// The folder's name as the spec compares it (NFKC). `None` when the path has
/// no final component even after resolving (`/`).
fn folder_name(dir: &Path) -> Option<String> {
    let owned;
    let dir = if dir.file_name().is_none() {
        owned = std::fs::canonicalize(dir).ok()?;
        owned.as_path()
    } else {
        dir
    };
    dir.file_name()
        .map(|n| name::normalize(&n.to_string_lossy()))
}

fn pos_of_offset(text: &str, offset: usize) -> Pos {
    let before = &text.as_bytes()[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    Pos::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
        1,
    )
}

/// Parses the YAML, retrying once with unquoted `: ` values repaired.
fn parse_yaml(yaml_text: &str, first_line: u32, sink: &mut Sink<'_>) -> Option<Node> {
    let err = match yaml::parse(yaml_text, first_line) {
        Ok(root) => return Some(root),
        Err(err) => err,
    };
    let repaired = yaml::repair_unquoted_colons(yaml_text, first_line)
        .and_then(|(fixed, repairs)| yaml::parse(&fixed, first_line).ok().map(|r| (r, repairs)));
    let message = format!("Invalid YAML in frontmatter: {}", err.message);
    match (repaired, sink.options.mode) {
        (Some((root, repairs)), Mode::Lenient) => {
            for repair in repairs {
                let d = sink.push(
                    Code::YamlRecovered,
                    Some(Pos::line(repair.line)),
                    format!(
                        "the value of '{}' contains ': ' and must be quoted; loaded it as a quoted string",
                        repair.key
                    ),
                );
                help(d, format!("quote the value: {}", repair.suggestion));
            }
            Some(root)
        }
        (Some((root, repairs)), Mode::Strict) => {
            let d = sink.push(Code::InvalidYaml, Some(err.pos), message);
            let fixes: Vec<String> = repairs
                .iter()
                .map(|r| format!("line {}: {}", r.line, r.suggestion))
                .collect();
            help(
                d,
                format!("a value holding ': ' must be quoted; {}", fixes.join("; ")),
            );
            // Report the other problems too, from the repaired text.
            Some(root)
        }
        (None, _) => {
            let d = sink.push(Code::InvalidYaml, Some(err.pos), message);
            if err.message.contains("budget") {
                help(
                    d,
                    "the frontmatter expands to too many nodes, aliases or levels; write it out plainly",
                );
            }
            None
        }
    }
}

fn description_pos(root: &Node) -> Option<Pos> {
    match &root.kind {
        NodeKind::Map(entries) => entries
            .iter()
            .find(|(k, _)| k.text == "description")
            .map(|(_, v)| v.pos),
        _ => None,
    }
}

/// The frontmatter's field rules.
fn check_fields(root: &Node, dir_name: Option<&str>, sink: &mut Sink<'_>) -> Frontmatter {
    let mut fm = Frontmatter::default();
    let entries: &[(Key, Node)] = match &root.kind {
        NodeKind::Map(entries) => entries,
        // Empty frontmatter: report the missing fields below.
        NodeKind::Null => &[],
        other => {
            sink.push(
                Code::FrontmatterNotMapping,
                Some(root.pos),
                format!(
                    "SKILL.md frontmatter must be a YAML mapping, found {}",
                    other.describe()
                ),
            )
            .help = Some("write one `key: value` per line".to_owned());
            return fm;
        }
    };
    let field = |name: &str| entries.iter().find(|(k, _)| k.text == name);
    let opening = Pos::new(1, 1, 3);

    // Unknown fields, one diagnostic each so each has its line.
    for (key, value) in entries {
        let k = key.text.as_str();
        if SPEC_FIELDS.contains(&k) {
            continue;
        }
        fm.extra.push((k.to_owned(), value.clone()));
        let admitted = sink.options.allowed_fields.iter().any(|f| f == k);
        let quiet_host_field = sink.options.mode == Mode::Lenient && KNOWN_HOST_FIELDS.contains(&k);
        if admitted || quiet_host_field {
            continue;
        }
        let d = sink.push(
            Code::UnknownField,
            Some(key.pos),
            format!(
                "Unexpected fields in frontmatter: {k}. Only {} are allowed.",
                spec_fields_list()
            ),
        );
        help(
            d,
            format!("move it under `metadata:`, remove it, or admit it with `--allow-field {k}`"),
        );
    }

    // name
    match field("name") {
        None
        | Some((
            _,
            Node {
                kind: NodeKind::Null,
                ..
            },
        )) => {
            let pos = field("name").map_or(opening, |(k, _)| k.pos);
            sink.push(
                Code::NameMissing,
                Some(pos),
                "Missing required field in frontmatter: name".to_owned(),
            )
            .help = dir_name.map(|d| format!("add `name: {d}`"));
        }
        Some((key, value)) => match &value.kind {
            NodeKind::Scalar(raw) => {
                let normalized = name::normalize(raw);
                for problem in name::check(&normalized, sink.options.charset) {
                    let d = sink.push(problem.code, Some(value.pos), problem.message);
                    if problem.code == Code::NameNotLowercase {
                        help(d, format!("use `name: {}`", normalized.to_lowercase()));
                    }
                }
                if let Some(dir) = dir_name
                    && !normalized.is_empty()
                    && dir != normalized
                {
                    let d = sink.push(
                        Code::NameDirMismatch,
                        Some(value.pos),
                        format!("Directory name '{dir}' must match skill name '{normalized}'"),
                    );
                    help(
                        d,
                        format!("rename the folder to `{normalized}`, or set `name: {dir}`"),
                    );
                }
                if !normalized.is_empty() {
                    fm.name = Some(normalized);
                }
            }
            other => {
                sink.push(
                    Code::NameNotString,
                    Some(key.pos),
                    format!(
                        "Field 'name' must be a non-empty string, found {}",
                        other.describe()
                    ),
                );
            }
        },
    }

    // description
    match field("description") {
        None
        | Some((
            _,
            Node {
                kind: NodeKind::Null,
                ..
            },
        )) => {
            let pos = field("description").map_or(opening, |(k, _)| k.pos);
            sink.push(
                Code::DescriptionMissing,
                Some(pos),
                "Missing required field in frontmatter: description".to_owned(),
            )
            .help =
                Some("add `description:` saying what the skill does and when to use it".to_owned());
        }
        Some((key, value)) => match &value.kind {
            NodeKind::Scalar(text) if text.trim().is_empty() => {
                sink.push(
                    Code::DescriptionEmpty,
                    Some(value.pos),
                    "Field 'description' must be a non-empty string".to_owned(),
                );
            }
            NodeKind::Scalar(text) => {
                let chars = text.chars().count();
                if chars > MAX_DESCRIPTION_CHARS {
                    let d = sink.push(
                        Code::DescriptionTooLong,
                        Some(value.pos),
                        format!(
                            "Description exceeds {MAX_DESCRIPTION_CHARS} character limit ({chars} chars)"
                        ),
                    );
                    help(d, "keep the catalog entry short; move detail into the body");
                }
                fm.description = Some(text.clone());
            }
            other => {
                sink.push(
                    Code::DescriptionNotString,
                    Some(key.pos),
                    format!(
                        "Field 'description' must be a non-empty string, found {}",
                        other.describe()
                    ),
                );
            }
        },
    }

    // compatibility
    if let Some((key, value)) = field("compatibility") {
        match &value.kind {
            NodeKind::Null => {}
            NodeKind::Scalar(text) if text.trim().is_empty() => {
                let d = sink.push(
                    Code::CompatibilityEmpty,
                    Some(value.pos),
                    "Field 'compatibility' must be 1-500 characters when present".to_owned(),
                );
                help(d, "remove the field, or say what the skill needs");
            }
            NodeKind::Scalar(text) => {
                let chars = text.chars().count();
                if chars > MAX_COMPATIBILITY_CHARS {
                    sink.push(
                        Code::CompatibilityTooLong,
                        Some(value.pos),
                        format!(
                            "Compatibility exceeds {MAX_COMPATIBILITY_CHARS} character limit ({chars} chars)"
                        ),
                    );
                }
                fm.compatibility = Some(text.clone());
            }
            other => {
                sink.push(
                    Code::CompatibilityNotString,
                    Some(key.pos),
                    format!(
                        "Field 'compatibility' must be a string, found {}",
                        other.describe()
                    ),
                );
            }
        }
    }

    // license
    if let Some((key, value)) = field("license") {
        match &value.kind {
            NodeKind::Null => {}
            NodeKind::Scalar(text) => fm.license = Some(text.clone()),
            other => {
                let d = sink.push(
                    Code::LicenseNotString,
                    Some(key.pos),
                    format!(
                        "Field 'license' must be a string, found {}",
                        other.describe()
                    ),
                );
                help(
                    d,
                    "name one license, e.g. `license: Apache-2.0`, or a bundled file",
                );
                let parts = scalars(value);
                if !parts.is_empty() {
                    fm.license = Some(parts.join(", "));
                }
            }
        }
    }

    // metadata
    if let Some((key, value)) = field("metadata") {
        match &value.kind {
            NodeKind::Null => {}
            NodeKind::Map(entries) => {
                for (key, item) in entries {
                    match &item.kind {
                        NodeKind::Scalar(text) => {
                            fm.metadata.push((key.text.clone(), text.clone()))
                        }
                        other => {
                            let d = sink.push(
                                Code::MetadataValueNotString,
                                Some(key.pos),
                                format!(
                                    "Field 'metadata' must map strings to strings: '{}' is {}",
                                    key.text,
                                    other.describe()
                                ),
                            );
                            help(
                                d,
                                format!("write it as a string, e.g. `{}: \"...\"`", key.text),
                            );
                        }
                    }
                }
            }
            other => {
                sink.push(
                    Code::MetadataNotMap,
                    Some(key.pos),
                    format!(
                        "Field 'metadata' must be a mapping, found {}",
                        other.describe()
                    ),
                );
            }
        }
    }

    // allowed-tools
    if let Some((key, value)) = field("allowed-tools") {
        match &value.kind {
            NodeKind::Null => {}
            NodeKind::Scalar(text) => {
                fm.allowed_tools = text.split_whitespace().map(str::to_owned).collect();
            }
            other => {
                let tools = scalars(value);
                let d = sink.push(
                    Code::AllowedToolsNotString,
                    Some(key.pos),
                    format!(
                        "Field 'allowed-tools' must be a space-separated string, found {}",
                        other.describe()
                    ),
                );
                if !tools.is_empty() {
                    help(d, format!("write `allowed-tools: {}`", tools.join(" ")));
                }
                fm.allowed_tools = tools;
            }
        }
    }
    fm
}

/// The scalar items of a list (one level).
fn scalars(node: &Node) -> Vec<String> {
    match &node.kind {
        NodeKind::Seq(items) => items
            .iter()
            .filter_map(|i| match &i.kind {
                NodeKind::Scalar(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn spec_fields_list() -> String {
    let quoted: Vec<String> = SPEC_FIELDS.iter().map(|f| format!("'{f}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// True when `checked` has no errors.
pub fn is_valid(checked: &Checked) -> bool {
    !checked.diagnostics.iter().any(Diagnostic::is_error)
}
