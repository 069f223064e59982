//! The frontmatter's field rules, one function per field: from the parsed
//! YAML to a typed [`Frontmatter`], with a diagnostic for every problem. A
//! new field gets its own `check_*` function here and a line in
//! [`check_fields`].

use crate::diagnostic::{Code, Pos};
use crate::limits::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS};
use crate::spec::control::first_control;
use crate::spec::name;
use crate::spec::options::{HOST_FIELD_FORMS, KNOWN_HOST_FIELDS, Mode, SPEC_FIELDS, Sink, help};
use crate::spec::requires::{Requirements, check_requires};
use crate::spec::tools::{SkillTool, check_entry_points, check_tools};
use crate::spec::yaml::{Key, Node, NodeKind};

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
    /// `tools` (a skilldeck extension): the skill's valid tools; a tool
    /// with any problem is reported and left out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<SkillTool>,
    /// `requires` and `metadata.openclaw.requires` (and aliases): what the
    /// skill needs from the machine, one entry per block.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirements>,
    /// Seed 004's `skill_type`: an agent skill or a LangChain tool package.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_type: Option<SkillType>,
    /// The capabilities an agent needs to be offered the skill: seed 004's
    /// top-level `required_capabilities` and `metadata.capabilities`
    /// (comma- or space-separated), together, sorted and deduplicated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
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

/// Seed 004's `skill_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillType {
    /// `agent_skill`: instructions and scripts; its `entry_points` are
    /// tools.
    AgentSkill,
    /// `langchain_tool`: a Python package implementing LangChain tools,
    /// offered as skill tools through a worker in the sandbox.
    LangchainTool,
}

impl SkillType {
    /// The frontmatter spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillType::AgentSkill => "agent_skill",
            SkillType::LangchainTool => "langchain_tool",
        }
    }

    /// The type spelled `text`.
    pub fn parse(text: &str) -> Option<SkillType> {
        match text {
            "agent_skill" => Some(SkillType::AgentSkill),
            "langchain_tool" => Some(SkillType::LangchainTool),
            _ => None,
        }
    }
}

impl std::fmt::Display for SkillType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The field `name` of a mapping, if present.
type Field<'n> = Option<&'n (Key, Node)>;

/// Where a missing field is reported: the opening `---`.
const OPENING: Pos = Pos::new(1, 1, 3);

/// Checks every field of the frontmatter `root`; `dir_name` is the skill
/// folder's name (for the name rule), `dir` the folder (for tool entry
/// points; `None` skips file checks), `typed_tools` the `tools` field as
/// typed JSON when the YAML could be read that way, `body` the Markdown
/// after the frontmatter (entry points take their descriptions there).
pub(crate) fn check_fields(
    root: &Node,
    dir_name: Option<&str>,
    dir: Option<&std::path::Path>,
    typed_tools: Option<&serde_json::Value>,
    body: &str,
    sink: &mut Sink<'_>,
) -> Frontmatter {
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
    check_unknown_fields(entries, sink, &mut fm);
    check_name(field("name"), dir_name, sink, &mut fm);
    check_description(field("description"), sink, &mut fm);
    check_compatibility(field("compatibility"), sink, &mut fm);
    check_license(field("license"), sink, &mut fm);
    check_metadata(field("metadata"), sink, &mut fm);
    check_allowed_tools(field("allowed-tools"), sink, &mut fm);
    let skill = fm.name.clone().or_else(|| dir_name.map(str::to_owned));
    fm.tools = check_tools(field("tools"), typed_tools, skill.as_deref(), dir, sink);
    let entry_points = check_entry_points(
        field("entry_points"),
        skill.as_deref(),
        dir,
        body,
        &fm.tools,
        sink,
    );
    fm.tools.extend(entry_points);
    fm.requires = check_requires(entries, sink);
    check_skill_type(field("skill_type"), sink, &mut fm);
    check_capabilities(field("required_capabilities"), sink, &mut fm);
    fm
}

/// Seed 004's `skill_type`: `agent_skill` or `langchain_tool`.
fn check_skill_type(field: Field<'_>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    let Some((key, value)) = field else {
        return;
    };
    match &value.kind {
        NodeKind::Null => {}
        NodeKind::Scalar(text) => match SkillType::parse(text.trim()) {
            Some(kind) => fm.skill_type = Some(kind),
            None => {
                let d = sink.push(
                    Code::SkillTypeInvalid,
                    Some(value.pos),
                    format!(
                        "Field 'skill_type' is '{}'; seed 004 defines agent_skill and langchain_tool",
                        text.escape_debug()
                    ),
                );
                help(
                    d,
                    "write `skill_type: agent_skill` (instructions, scripts, entry points) or `skill_type: langchain_tool` (a Python package of LangChain tools)",
                );
            }
        },
        other => {
            sink.push(
                Code::SkillTypeInvalid,
                Some(key.pos),
                format!(
                    "Field 'skill_type' must be a string, found {}",
                    other.describe()
                ),
            );
        }
    }
}

/// Seed 004's top-level `required_capabilities` (a list of words, or one
/// comma- or space-separated string), merged with `metadata.capabilities`
/// (read by [`check_metadata`] first).
fn check_capabilities(field: Field<'_>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    let mut words: Vec<String> = fm
        .metadata
        .iter()
        .filter(|(k, _)| k == "capabilities")
        .flat_map(|(_, v)| split_words(v))
        .collect();
    if let Some((key, value)) = field {
        match &value.kind {
            NodeKind::Null => {}
            NodeKind::Scalar(text) => words.extend(split_words(text)),
            NodeKind::Seq(items) => {
                for item in items {
                    match &item.kind {
                        NodeKind::Scalar(text) => words.extend(split_words(text)),
                        other => {
                            sink.push(
                                Code::CapabilitiesInvalid,
                                Some(item.pos),
                                format!(
                                    "Each entry of 'required_capabilities' must be a word, found {}",
                                    other.describe()
                                ),
                            );
                        }
                    }
                }
            }
            NodeKind::Map(_) => {
                let d = sink.push(
                    Code::CapabilitiesInvalid,
                    Some(key.pos),
                    "Field 'required_capabilities' must be a list of words, found a mapping"
                        .to_owned(),
                );
                help(d, "write `required_capabilities: [\"weather\"]`");
            }
        }
    }
    words.sort();
    words.dedup();
    fm.capabilities = words;
}

fn split_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
}

/// Fields the specification does not define: one diagnostic each, so each
/// has its line (unless admitted, or a known host field in lenient mode).
fn check_unknown_fields(entries: &[(Key, Node)], sink: &mut Sink<'_>, fm: &mut Frontmatter) {
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
        let text = match HOST_FIELD_FORMS.iter().find(|(f, _)| *f == k) {
            Some((_, form)) => format!(
                "{form}; admit it with `--allow-field {k}` (lenient mode, how hosts load, knows it)"
            ),
            None => format!(
                "move it under `metadata:`, remove it, or admit it with `--allow-field {k}`"
            ),
        };
        help(d, text);
    }
}

/// `name`: required; the naming rules; equal to the folder's name.
fn check_name(field: Field<'_>, dir_name: Option<&str>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    match field {
        None
        | Some((
            _,
            Node {
                kind: NodeKind::Null,
                ..
            },
        )) => {
            let pos = field.map_or(OPENING, |(k, _)| k.pos);
            sink.push(
                Code::NameMissing,
                Some(pos),
                "Missing required field in frontmatter: name".to_owned(),
            )
            .help = dir_name
                .and_then(|d| name::suggest(d, sink.options.charset))
                .map(|d| format!("add `name: {d}` (and name the folder the same)"));
        }
        Some((key, value)) => match &value.kind {
            NodeKind::Scalar(raw) => {
                let normalized = name::normalize(raw);
                check_control(sink, "name", raw, value.pos, true);
                let charset = sink.options.charset;
                let problems = name::check(&normalized, charset);
                let name_ok = problems.is_empty();
                // Fix-its are themselves valid: the closest valid name
                // (worked out only for a name that needs one).
                let suggestion = if name_ok {
                    None
                } else {
                    name::suggest(&normalized, charset)
                };
                for problem in problems {
                    let d = sink.push(problem.code, Some(value.pos), problem.message);
                    if let Some(s) = &suggestion {
                        help(d, format!("use `name: {s}`"));
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
                    let dir_ok = name::check(dir, charset).is_empty();
                    let fix = match (name_ok, dir_ok, &suggestion) {
                        (true, true, _) => Some(format!(
                            "rename the folder to `{normalized}`, or set `name: {dir}`"
                        )),
                        (true, false, _) => Some(format!("rename the folder to `{normalized}`")),
                        (false, true, _) => Some(format!("set `name: {dir}`")),
                        (false, false, Some(s)) => {
                            Some(format!("rename the folder to `{s}` and set `name: {s}`"))
                        }
                        (false, false, None) => None,
                    };
                    if let Some(fix) = fix {
                        help(d, fix);
                    }
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
}

/// `description`: required, non-empty, at most the character limit.
fn check_description(field: Field<'_>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    match field {
        None
        | Some((
            _,
            Node {
                kind: NodeKind::Null,
                ..
            },
        )) => {
            let pos = field.map_or(OPENING, |(k, _)| k.pos);
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
                check_control(sink, "description", text, value.pos, false);
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
}

/// `compatibility`: optional; 1 to the character limit when present.
fn check_compatibility(field: Field<'_>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    if let Some((key, value)) = field {
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
                check_control(sink, "compatibility", text, value.pos, false);
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
}

/// `license`: optional string.
fn check_license(field: Field<'_>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    if let Some((key, value)) = field {
        match &value.kind {
            NodeKind::Null => {}
            NodeKind::Scalar(text) => {
                check_control(sink, "license", text, value.pos, false);
                fm.license = Some(text.clone());
            }
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
}

/// `metadata`: optional map of strings to strings.
fn check_metadata(field: Field<'_>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    if let Some((key, value)) = field {
        match &value.kind {
            NodeKind::Null => {}
            NodeKind::Map(entries) => {
                for (key, item) in entries {
                    match &item.kind {
                        NodeKind::Scalar(text) => {
                            let field = format!("metadata.{}", key.text);
                            check_control(sink, &field, text, item.pos, false);
                            fm.metadata.push((key.text.clone(), text.clone()));
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
}

/// `allowed-tools`: optional space-separated string.
fn check_allowed_tools(field: Field<'_>, sink: &mut Sink<'_>, fm: &mut Frontmatter) {
    if let Some((key, value)) = field {
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
}

/// A control character in the text field `field` (see
/// [`crate::spec::control`]); `one_line` for a name, where tab and line
/// feed count too. One diagnostic per field.
fn check_control(sink: &mut Sink<'_>, field: &str, text: &str, pos: Pos, one_line: bool) {
    if let Some(c) = first_control(text, one_line) {
        let d = sink.push(
            Code::ControlCharacter,
            Some(pos),
            format!(
                "Field '{field}' contains the control character U+{:04X}; it is never shown raw",
                u32::from(c)
            ),
        );
        help(d, "remove it (hosts show each control character as U+FFFD)");
    }
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

pub(crate) fn description_pos(root: &Node) -> Option<Pos> {
    match &root.kind {
        NodeKind::Map(entries) => entries
            .iter()
            .find(|(k, _)| k.text == "description")
            .map(|(_, v)| v.pos),
        _ => None,
    }
}
