//! Skill-defined tools: the `tools:` frontmatter field (a skilldeck
//! extension). Each entry declares one tool a host may offer once the skill
//! is served:
//!
//! ```yaml
//! tools:
//!   - name: search_notes
//!     description: Search the notes by keyword.
//!     parameters:                 # the compact form ...
//!       query: {type: string, description: Words to find, required: true}
//!       tags: {type: array, items: {type: string}}   # or `items: string`
//!     run: scripts/search.py      # the entry point, inside the skill
//!   - name: stats
//!     description: Count the notes.
//!     input_schema:               # ... or a full JSON Schema
//!       type: object
//!       properties: {}
//!     run: scripts/stats.sh
//! ```
//!
//! A tool without `run` is implemented by the host (seed 002's tools: the
//! application registers a handler for the full name); it is kept, and a
//! host offers it only once a handler is registered.
//!
//! The compact `parameters` map is converted to a JSON Schema object
//! (`type: object`, `properties`, `required`, `additionalProperties:
//! false`), so every [`SkillTool`] carries one full schema. A tool with any
//! problem is reported (stable codes, each at its key's position) and left
//! out: a host never offers a tool it could not validate.
//!
//! A `tools` list made only of strings is another host's allowlist of tool
//! names (GitHub Copilot prompt files write `tools: ['codebase', ...]`): it
//! declares no skill tools and is not reported.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::diagnostic::{Code, Pos};
use crate::fs::contain::normalize_resource_path;
use crate::limits::{MAX_SKILL_TOOLS, MAX_TOOL_FULL_NAME_CHARS};
use crate::spec::options::{Sink, help};
use crate::spec::yaml::{Key, Node, NodeKind};

/// The name of a skill-defined tool: `^[a-z][a-z0-9_]*$`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolName(String);

/// Why a text is not a [`ToolName`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid tool name '{}': it must start with a lowercase ASCII letter and hold only lowercase letters, digits and '_'",
    .0.escape_debug()
)]
pub struct ToolNameError(pub String);

impl ToolName {
    /// `name` when it matches `^[a-z][a-z0-9_]*$`.
    pub fn new(name: &str) -> Result<Self, ToolNameError> {
        let mut chars = name.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
        let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if first_ok && rest_ok {
            Ok(ToolName(name.to_owned()))
        } else {
            Err(ToolNameError(name.to_owned()))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ToolName {
    type Error = ToolNameError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        ToolName::new(&value)
    }
}

impl From<ToolName> for String {
    fn from(value: ToolName) -> Self {
        value.0
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The separator between the skill and the tool in a full tool name.
pub const FULL_NAME_SEPARATOR: &str = "__";

/// The full name of tool `tool` of skill `skill`: `{skill}__{tool}`, with
/// the skill name's hyphens turned into underscores (`pdf-tools` +
/// `merge` = `pdf_tools__merge`); a plugin skill's name is taken in its
/// identifier form ([`crate::spec::plugin_name::identifier`]:
/// `document-skills:pdf` + `merge` = `document_skills__pdf__merge`).
pub fn full_tool_name(skill: &str, tool: &ToolName) -> String {
    let skill = crate::spec::plugin_name::identifier(skill);
    let mut out = String::with_capacity(skill.len() + 2 + tool.0.len());
    out.extend(skill.chars().map(|c| if c == '-' { '_' } else { c }));
    out.push_str(FULL_NAME_SEPARATOR);
    out.push_str(&tool.0);
    out
}

/// How a tool's arguments reach the code that implements it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ToolCall {
    /// A `tools:` entry: the arguments object, as JSON on stdin.
    #[default]
    Json,
    /// A seed 004 entry point (`entry_points:`): the arguments' `args` (a
    /// list of strings) on the command line, their `input` (an object) as
    /// JSON on stdin (nothing when absent).
    EntryPoint,
    /// A tool of a LangChain tool package (`skill_type: langchain_tool`),
    /// found by the host's sandboxed worker: `run` is the module that
    /// defines it, `name` its LangChain name (the worker invokes the tool of
    /// that name with the arguments object).
    #[serde(rename = "langchain")]
    LangChain {
        /// The tool's name as LangChain knows it (`BaseTool.name`).
        name: String,
    },
}

impl ToolCall {
    /// True for [`ToolCall::Json`] (not serialised: the default).
    pub fn is_json(&self) -> bool {
        matches!(self, ToolCall::Json)
    }
}

/// One tool a skill declares.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SkillTool {
    /// Its name, unique in the skill.
    pub name: ToolName,
    /// What it does (shown to the model).
    pub description: String,
    /// The JSON Schema of its arguments: always an object schema (compact
    /// `parameters` are converted), checked to compile.
    pub input_schema: Value,
    /// The entry point: a path relative to the skill folder, normalised
    /// (`/`-separated, no `.`), checked to stay inside the skill. `None`:
    /// the host implements the tool (it registers a handler).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The line of its entry in `SKILL.md` (1-based; 0 when unknown), so a
    /// later report about the tool (no handler registered) points at it.
    #[serde(default)]
    pub line: u32,
    /// How the arguments reach the code ([`ToolCall::Json`] for `tools:`).
    #[serde(default, skip_serializing_if = "ToolCall::is_json")]
    pub call: ToolCall,
}

impl SkillTool {
    /// True when the skill names no script: the host implements the tool.
    pub fn is_host_implemented(&self) -> bool {
        self.run.is_none()
    }

    /// The tool's full name for skill `skill` ([`full_tool_name`]).
    pub fn full_name(&self, skill: &str) -> String {
        full_tool_name(skill, &self.name)
    }
}

/// The keys a tool entry may have.
const TOOL_KEYS: [&str; 5] = ["name", "description", "parameters", "input_schema", "run"];

/// The keys a compact parameter may have.
const PARAM_KEYS: [&str; 5] = ["type", "description", "required", "items", "enum"];

/// Checks the `tools` field. `typed` is the same field as typed JSON (YAML
/// 1.2 types: `minimum: 3` is a number), when the YAML could be read that
/// way; else scalars are typed by their text. `skill` is the skill's name
/// (for full names), `dir` its folder (for `run`; `None` skips the file
/// checks).
pub(crate) fn check_tools(
    field: Option<&(Key, Node)>,
    typed: Option<&Value>,
    skill: Option<&str>,
    dir: Option<&Path>,
    sink: &mut Sink<'_>,
) -> Vec<SkillTool> {
    let Some((key, value)) = field else {
        return Vec::new();
    };
    let items = match &value.kind {
        NodeKind::Null => return Vec::new(),
        NodeKind::Seq(items) => items,
        other => {
            let d = sink.push(
                Code::ToolsNotList,
                Some(key.pos),
                format!(
                    "Field 'tools' must be a list of tools, found {}",
                    other.describe()
                ),
            );
            help(
                d,
                "write `tools:` as a list of `- name: ...` entries with `description`, `parameters` and `run`",
            );
            return Vec::new();
        }
    };
    // Another host's allowlist of tool names (Copilot's `tools: [...]`).
    if items.iter().all(|i| matches!(i.kind, NodeKind::Scalar(_))) {
        return Vec::new();
    }
    let typed_items = typed.and_then(Value::as_array);
    let real_dir = dir.and_then(|d| std::fs::canonicalize(d).ok());
    let mut tools: Vec<SkillTool> = Vec::new();
    let mut seen: Vec<(String, Pos)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i >= MAX_SKILL_TOOLS {
            sink.push(
                Code::ToolInvalid,
                Some(item.pos),
                format!("A skill declares at most {MAX_SKILL_TOOLS} tools; the rest are ignored"),
            );
            break;
        }
        let typed_item = typed_items.and_then(|a| a.get(i));
        if let Some(tool) = check_tool(item, typed_item, skill, real_dir.as_deref(), &seen, sink) {
            seen.push((tool.name.0.clone(), item.pos));
            tools.push(tool);
        } else if let Some(name) = entry_name(item) {
            // A broken tool still claims its name: a second one of that
            // name is a duplicate either way.
            seen.push((name, item.pos));
        }
    }
    tools
}

fn entry_name(item: &Node) -> Option<String> {
    match &item.kind {
        NodeKind::Map(entries) => {
            entries
                .iter()
                .find(|(k, _)| k.text == "name")
                .and_then(|(_, v)| match &v.kind {
                    NodeKind::Scalar(s) => Some(s.clone()),
                    _ => None,
                })
        }
        _ => None,
    }
}

/// One entry; `None` (with diagnostics) when anything is wrong.
fn check_tool(
    item: &Node,
    typed: Option<&Value>,
    skill: Option<&str>,
    real_dir: Option<&Path>,
    seen: &[(String, Pos)],
    sink: &mut Sink<'_>,
) -> Option<SkillTool> {
    let NodeKind::Map(entries) = &item.kind else {
        sink.push(
            Code::ToolInvalid,
            Some(item.pos),
            format!(
                "Each entry of 'tools' must be a mapping, found {}",
                item.kind.describe()
            ),
        );
        return None;
    };
    let mut ok = true;
    for (k, _) in entries {
        if !TOOL_KEYS.contains(&k.text.as_str()) {
            let d = sink.push(
                Code::ToolInvalid,
                Some(k.pos),
                format!(
                    "Unknown key '{}' in a tool; a tool has {}",
                    k.text,
                    TOOL_KEYS.join(", ")
                ),
            );
            help(d, "remove it, or move it into the schema");
            ok = false;
        }
    }
    let get = |name: &str| entries.iter().find(|(k, _)| k.text == name);
    let typed_get = |name: &str| typed.and_then(|t| t.get(name));

    let name = check_tool_name(get("name"), item.pos, skill, seen, sink);
    let description = match get("description") {
        Some((_, v)) => match &v.kind {
            NodeKind::Scalar(s) if !s.trim().is_empty() => Some(s.clone()),
            _ => {
                sink.push(
                    Code::ToolDescriptionMissing,
                    Some(v.pos),
                    "A tool's 'description' must be a non-empty string".to_owned(),
                );
                None
            }
        },
        None => {
            let d = sink.push(
                Code::ToolDescriptionMissing,
                Some(item.pos),
                "A tool needs a 'description' (the model reads it to pick the tool)".to_owned(),
            );
            help(d, "add `description:` saying what the tool does");
            None
        }
    };
    let run = check_run(get("run"), real_dir, sink);
    let schema = match (get("parameters"), get("input_schema")) {
        (Some((pk, _)), Some((sk, _))) => {
            let d = sink.push(
                Code::ToolSchemaConflict,
                Some(sk.pos),
                format!(
                    "A tool gives both 'parameters' (line {}) and 'input_schema'; give one",
                    pk.pos.line
                ),
            );
            help(
                d,
                "keep `parameters` for the compact form, or `input_schema` for a full JSON Schema",
            );
            None
        }
        (Some((pk, pv)), None) => compact_schema(pk, pv, typed_get("parameters"), sink)
            .and_then(|schema| compiled(schema, pk.pos, "parameters", sink)),
        (None, Some((sk, sv))) => {
            let schema = typed_get("input_schema")
                .cloned()
                .unwrap_or_else(|| node_to_json(sv));
            full_schema(schema, sk.pos, sink)
        }
        // No arguments: an empty object.
        (None, None) => Some(json!({
            "type": "object",
            "properties": {},
            "additionalProperties": false
        })),
    };
    let (name, description, run, input_schema) = (name?, description?, run?, schema?);
    ok.then_some(SkillTool {
        name,
        description,
        input_schema,
        run,
        line: item.pos.line,
        call: ToolCall::Json,
    })
}

fn check_tool_name(
    field: Option<&(Key, Node)>,
    item_pos: Pos,
    skill: Option<&str>,
    seen: &[(String, Pos)],
    sink: &mut Sink<'_>,
) -> Option<ToolName> {
    let Some((_, value)) = field else {
        sink.push(
            Code::ToolNameInvalid,
            Some(item_pos),
            "A tool needs a 'name'".to_owned(),
        );
        return None;
    };
    let NodeKind::Scalar(text) = &value.kind else {
        sink.push(
            Code::ToolNameInvalid,
            Some(value.pos),
            format!(
                "A tool's 'name' must be a string, found {}",
                value.kind.describe()
            ),
        );
        return None;
    };
    let name = match ToolName::new(text) {
        Ok(name) => name,
        Err(e) => {
            let d = sink.push(Code::ToolNameInvalid, Some(value.pos), e.to_string());
            let fixed: String = text
                .trim()
                .to_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            if ToolName::new(&fixed).is_ok() {
                help(d, format!("use `name: {fixed}`"));
            }
            return None;
        }
    };
    if let Some((_, first)) = seen.iter().find(|(n, _)| n == text) {
        sink.push(
            Code::ToolNameDuplicate,
            Some(value.pos),
            format!(
                "Tool name '{text}' is already used by the tool at line {}",
                first.line
            ),
        );
        return None;
    }
    if let Some(skill) = skill {
        let full = full_tool_name(skill, &name);
        let chars = full.chars().count();
        if chars > MAX_TOOL_FULL_NAME_CHARS {
            let d = sink.push(
                Code::ToolFullNameTooLong,
                Some(value.pos),
                format!(
                    "The full tool name '{full}' is {chars} characters, over the {MAX_TOOL_FULL_NAME_CHARS} character limit"
                ),
            );
            help(d, "shorten the tool's name (or the skill's)");
            return None;
        }
    }
    Some(name)
}

/// The tool's `run`: `Some(None)` when absent (host-implemented),
/// `Some(Some(path))` when it names a file of the skill, `None` when it is
/// wrong (reported).
fn check_run(
    field: Option<&(Key, Node)>,
    real_dir: Option<&Path>,
    sink: &mut Sink<'_>,
) -> Option<Option<String>> {
    let value = match field {
        // No `run`: the host implements the tool.
        None => return Some(None),
        Some((_, v)) if matches!(&v.kind, NodeKind::Scalar(s) if !s.trim().is_empty()) => v,
        Some((k, _)) => {
            let d = sink.push(
                Code::ToolRunMissing,
                Some(k.pos),
                "A tool's 'run' must name the script inside the skill that implements it"
                    .to_owned(),
            );
            help(
                d,
                "write e.g. `run: scripts/tool.py`, or leave `run` out for a tool the host implements",
            );
            return None;
        }
    };
    let NodeKind::Scalar(raw) = &value.kind else {
        return None;
    };
    let path = match normalize_resource_path(raw.trim()) {
        Ok(path) if !path.is_empty() => path,
        Ok(_) => {
            sink.push(
                Code::ToolRunNotFound,
                Some(value.pos),
                format!("A tool's 'run' must name a file, not the skill folder ('{raw}')"),
            );
            return None;
        }
        Err(problem) => {
            sink.push(
                Code::ToolRunEscapes,
                Some(value.pos),
                format!("A tool's 'run' ('{}') is {problem}", raw.escape_debug()),
            );
            return None;
        }
    };
    if let Some(root) = real_dir {
        let resolved = match std::fs::canonicalize(root.join(&path)) {
            Ok(resolved) => resolved,
            Err(_) => {
                sink.push(
                    Code::ToolRunNotFound,
                    Some(value.pos),
                    format!("A tool's 'run' names '{path}', which the skill does not contain"),
                );
                return None;
            }
        };
        if !resolved.starts_with(root) {
            sink.push(
                Code::ToolRunEscapes,
                Some(value.pos),
                format!("A tool's 'run' ('{path}') leads outside the skill folder"),
            );
            return None;
        }
        if !std::fs::metadata(&resolved).is_ok_and(|m| m.is_file()) {
            sink.push(
                Code::ToolRunNotFound,
                Some(value.pos),
                format!("A tool's 'run' ('{path}') is not a regular file"),
            );
            return None;
        }
    }
    Some(Some(path))
}

/// The compact `parameters` map as a JSON Schema object.
fn compact_schema(
    key: &Key,
    value: &Node,
    typed: Option<&Value>,
    sink: &mut Sink<'_>,
) -> Option<Value> {
    let entries = match &value.kind {
        NodeKind::Null => &Vec::new(),
        NodeKind::Map(entries) => entries,
        other => {
            sink.push(
                Code::ToolSchemaInvalid,
                Some(key.pos),
                format!(
                    "A tool's 'parameters' must map parameter names to their types, found {}",
                    other.describe()
                ),
            );
            return None;
        }
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut ok = true;
    for (pkey, pnode) in entries {
        let typed_param = typed.and_then(|t| t.get(&pkey.text));
        let NodeKind::Map(fields) = &pnode.kind else {
            // `name: string` shorthand.
            if let NodeKind::Scalar(ty) = &pnode.kind {
                properties.insert(pkey.text.clone(), json!({ "type": ty }));
                continue;
            }
            sink.push(
                Code::ToolSchemaInvalid,
                Some(pkey.pos),
                format!(
                    "Parameter '{}' must be a mapping with `type` (and `description`, `required`, `items`, `enum`), found {}",
                    pkey.text,
                    pnode.kind.describe()
                ),
            );
            ok = false;
            continue;
        };
        let mut prop = Map::new();
        for (fk, fv) in fields {
            let typed_field = typed_param.and_then(|t| t.get(&fk.text));
            match fk.text.as_str() {
                "required" => match &fv.kind {
                    NodeKind::Scalar(s) if s == "true" => required.push(pkey.text.clone()),
                    NodeKind::Scalar(s) if s == "false" => {}
                    _ => {
                        sink.push(
                            Code::ToolSchemaInvalid,
                            Some(fv.pos),
                            format!(
                                "Parameter '{}': 'required' must be true or false",
                                pkey.text
                            ),
                        );
                        ok = false;
                    }
                },
                // `items: string` is shorthand for `items: {type: string}`
                // (seed 002 writes it): a bare type name, not a schema.
                "items" if matches!(&fv.kind, NodeKind::Scalar(_)) => {
                    let v = typed_field.cloned().unwrap_or_else(|| node_to_json(fv));
                    prop.insert("items".to_owned(), json!({ "type": v }));
                }
                k if PARAM_KEYS.contains(&k) => {
                    let v = typed_field.cloned().unwrap_or_else(|| node_to_json(fv));
                    prop.insert(k.to_owned(), v);
                }
                other => {
                    let d = sink.push(
                        Code::ToolSchemaInvalid,
                        Some(fk.pos),
                        format!(
                            "Parameter '{}': unknown key '{other}'; the compact form has {}",
                            pkey.text,
                            PARAM_KEYS.join(", ")
                        ),
                    );
                    help(d, "use `input_schema:` for a full JSON Schema");
                    ok = false;
                }
            }
        }
        if !prop.contains_key("type") && !prop.contains_key("enum") {
            sink.push(
                Code::ToolSchemaInvalid,
                Some(pkey.pos),
                format!("Parameter '{}' needs a `type`", pkey.text),
            );
            ok = false;
        }
        properties.insert(pkey.text.clone(), Value::Object(prop));
    }
    ok.then(|| {
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })
    })
}

/// A full `input_schema`: an object schema that compiles.
fn full_schema(schema: Value, pos: Pos, sink: &mut Sink<'_>) -> Option<Value> {
    let is_object_schema = schema.get("type").and_then(Value::as_str) == Some("object");
    if !is_object_schema {
        let d = sink.push(
            Code::ToolSchemaInvalid,
            Some(pos),
            "A tool's 'input_schema' must be a JSON Schema with `type: object` (tool arguments are a JSON object)".to_owned(),
        );
        help(
            d,
            "start the schema with `type: object` and list `properties`",
        );
        return None;
    }
    compiled(schema, pos, "input_schema", sink)
}

/// `schema` when it compiles as a JSON Schema (external references are
/// never fetched: one that needs them does not compile).
fn compiled(schema: Value, pos: Pos, field: &str, sink: &mut Sink<'_>) -> Option<Value> {
    match jsonschema::validator_for(&schema) {
        Ok(_) => Some(schema),
        Err(e) => {
            sink.push(
                Code::ToolSchemaInvalid,
                Some(pos),
                format!("A tool's '{field}' is not a valid JSON Schema: {e}"),
            );
            None
        }
    }
}

/// The keys an entry point written as a mapping may have.
const ENTRY_POINT_KEYS: [&str; 2] = ["run", "description"];

/// The JSON Schema of an entry point's arguments: `args`, the command-line
/// arguments (strings), and `input`, an object passed as JSON on stdin.
pub fn entry_point_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "args": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Command-line arguments for the script, in order."
            },
            "input": {
                "type": "object",
                "description": "A JSON object the script reads on standard input."
            }
        },
        "additionalProperties": false
    })
}

/// Checks seed 004's `entry_points` (a mapping of entry names to scripts)
/// and turns each into a tool of the same rules as a `tools:` entry: its
/// name is a [`ToolName`] unique among the skill's tools (`declared`), its
/// script is inside the skill, its full name fits. The description is the
/// mapping form's `description`, else the body's line for the entry
/// (`` - `get_current`: Get current weather ``), else a sentence naming
/// the script.
pub(crate) fn check_entry_points(
    field: Option<&(Key, Node)>,
    skill: Option<&str>,
    dir: Option<&Path>,
    body: &str,
    declared: &[SkillTool],
    sink: &mut Sink<'_>,
) -> Vec<SkillTool> {
    let Some((key, value)) = field else {
        return Vec::new();
    };
    let entries = match &value.kind {
        NodeKind::Null => return Vec::new(),
        NodeKind::Map(entries) => entries,
        other => {
            let d = sink.push(
                Code::ToolEntryPointsInvalid,
                Some(key.pos),
                format!(
                    "Field 'entry_points' must map entry names to scripts, found {}",
                    other.describe()
                ),
            );
            help(
                d,
                "write one `name: script.py` per line under `entry_points:` (seed 004's form), or declare `tools:`",
            );
            return Vec::new();
        }
    };
    let real_dir = dir.and_then(|d| std::fs::canonicalize(d).ok());
    let mut seen: Vec<(String, Pos)> = declared
        .iter()
        .map(|t| (t.name.0.clone(), Pos::new(t.line, 1, 0)))
        .collect();
    let mut tools = Vec::new();
    for (i, (ekey, evalue)) in entries.iter().enumerate() {
        if declared.len() + i >= MAX_SKILL_TOOLS {
            sink.push(
                Code::ToolEntryPointsInvalid,
                Some(ekey.pos),
                format!("A skill declares at most {MAX_SKILL_TOOLS} tools; the rest are ignored"),
            );
            break;
        }
        let name_node = Node {
            kind: NodeKind::Scalar(ekey.text.clone()),
            pos: ekey.pos,
        };
        let name_field = (ekey.clone(), name_node);
        let name = check_tool_name(Some(&name_field), ekey.pos, skill, &seen, sink);
        seen.push((ekey.text.clone(), ekey.pos));
        let (run_node, description) = match &evalue.kind {
            NodeKind::Scalar(_) => (Some(evalue.clone()), None),
            NodeKind::Map(fields) => {
                let mut ok = true;
                for (fk, _) in fields {
                    if !ENTRY_POINT_KEYS.contains(&fk.text.as_str()) {
                        let d = sink.push(
                            Code::ToolEntryPointsInvalid,
                            Some(fk.pos),
                            format!(
                                "Unknown key '{}' in entry point '{}'; an entry point has {}",
                                fk.text,
                                ekey.text,
                                ENTRY_POINT_KEYS.join(", ")
                            ),
                        );
                        help(d, "use `tools:` for a tool with its own parameters");
                        ok = false;
                    }
                }
                let get = |k: &str| fields.iter().find(|(fk, _)| fk.text == k);
                let description = get("description").and_then(|(_, v)| match &v.kind {
                    NodeKind::Scalar(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
                    _ => None,
                });
                if !ok {
                    continue;
                }
                (get("run").map(|(_, v)| v.clone()), description)
            }
            other => {
                sink.push(
                    Code::ToolEntryPointsInvalid,
                    Some(evalue.pos),
                    format!(
                        "Entry point '{}' must name a script (or be a mapping with `run` and `description`), found {}",
                        ekey.text,
                        other.describe()
                    ),
                );
                continue;
            }
        };
        let Some(run_node) = run_node else {
            let d = sink.push(
                Code::ToolRunMissing,
                Some(ekey.pos),
                format!("Entry point '{}' names no script", ekey.text),
            );
            help(d, format!("write `{}: script.py`", ekey.text));
            continue;
        };
        let run_field = (ekey.clone(), run_node);
        let run = match check_run(Some(&run_field), real_dir.as_deref(), sink) {
            Some(Some(run)) => run,
            _ => continue,
        };
        let Some(name) = name else {
            continue;
        };
        let description = description
            .or_else(|| body_description(body, name.as_str()))
            .unwrap_or_else(|| {
                format!(
                    "Entry point '{name}': runs {run} (`args` are its command-line arguments, `input` is JSON on its standard input)."
                )
            });
        tools.push(SkillTool {
            name,
            description,
            input_schema: entry_point_schema(),
            run: Some(run),
            line: ekey.pos.line,
            call: ToolCall::EntryPoint,
        });
    }
    tools
}

/// The body's description of entry point `name`: the text after a list
/// item that starts with it (`` - `get_current`: Get current weather ``,
/// `- **get_current** - ...`), at most [`crate::limits::MAX_DESCRIPTION_CHARS`]
/// characters.
fn body_description(body: &str, name: &str) -> Option<String> {
    let mut in_fence = false;
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let Some(item) = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
        else {
            continue;
        };
        let item = item.trim_start();
        let rest = [("`", "`"), ("**", "**"), ("", "")]
            .iter()
            .find_map(|(open, close)| {
                item.strip_prefix(open)?
                    .strip_prefix(name)?
                    .strip_prefix(close)
            });
        let Some(rest) = rest else {
            continue;
        };
        let rest = rest.trim_start();
        let text = [":", "—", "–", "-"]
            .iter()
            .find_map(|sep| rest.strip_prefix(sep))
            .map(str::trim);
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            return Some(
                text.chars()
                    .take(crate::limits::MAX_DESCRIPTION_CHARS)
                    .collect(),
            );
        }
    }
    None
}

/// A YAML node as JSON, scalars typed by their text the way YAML 1.2
/// types plain scalars (used only when the typed parse is unavailable).
pub(crate) fn node_to_json(node: &Node) -> Value {
    match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Scalar(s) => match s.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" | "~" => Value::Null,
            text => text
                .parse::<i64>()
                .ok()
                .map(Value::from)
                .or_else(|| {
                    text.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
                })
                .unwrap_or_else(|| Value::String(text.to_owned())),
        },
        NodeKind::Seq(items) => Value::Array(items.iter().map(node_to_json).collect()),
        NodeKind::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.text.clone(), node_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_lowercase_snake_case_starting_with_a_letter() {
        for good in ["a", "search", "merge_pdf", "v2_call"] {
            assert!(ToolName::new(good).is_ok(), "{good}");
        }
        for bad in ["", "Search", "2fast", "_x", "with-hyphen", "sp ace", "é"] {
            assert!(ToolName::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_entry_point_takes_its_description_from_the_bodys_list_item() {
        let body = "# Weather\n\n```\n- `get_current`: not this one\n```\n## Entry Points\n\n- `get_current`: Get current weather\n- **get_forecast** - Get 7-day forecast\n- `other`\n";
        assert_eq!(
            body_description(body, "get_current").as_deref(),
            Some("Get current weather")
        );
        assert_eq!(
            body_description(body, "get_forecast").as_deref(),
            Some("Get 7-day forecast")
        );
        assert_eq!(body_description(body, "other"), None);
        assert_eq!(body_description(body, "get"), None);
    }

    #[test]
    fn full_name_turns_the_skill_hyphens_into_underscores() {
        let tool = ToolName::new("merge").unwrap();
        assert_eq!(full_tool_name("pdf-tools", &tool), "pdf_tools__merge");
    }
}
