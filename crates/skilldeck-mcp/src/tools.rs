//! The tools face, which every current client speaks:
//!
//! - `activate_skill` (`name`, optional `arguments`): the skill's
//!   instructions; its description carries the catalog under the configured
//!   budget, and `name` is an enum of the model-invocable skills (up to
//!   [`crate::options::MAX_TOOL_NAME_ENUM`]);
//! - `read_skill_resource` (`name`, `path`): a file of a skill, under the
//!   core's traversal rules;
//! - `search_skills` (`query`, optional `limit`): BM25 over names and
//!   descriptions.
//!
//! Bad input is a tool error (`isError: true`) whose text tells the model
//! what to do instead; it never fails the request or the server.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ResourceContents, Tool, ToolAnnotations,
};
use serde_json::{Value, json};
use skilldeck::{ResourceContent, SearchQuery};

use crate::engine::{ActivateError, Activated, Engine, Snapshot};
use crate::options::{DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS, ServeOptions};
use crate::uri;

/// Tool name: load a skill.
pub const ACTIVATE: &str = "activate_skill";
/// Tool name: read a file of a skill.
pub const READ: &str = "read_skill_resource";
/// Tool name: search the skills.
pub const SEARCH: &str = "search_skills";

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations::new().read_only(true).destructive(false)
}

/// The tools for `snapshot`: none when no skill is served.
pub fn definitions(snapshot: &Snapshot, options: &ServeOptions) -> Vec<Tool> {
    if snapshot.is_empty() {
        return Vec::new();
    }
    let names = &snapshot.model_names;
    let name_schema = if !names.is_empty() && names.len() <= options.max_tool_name_enum {
        json!({"type": "string", "enum": names, "description": "The skill to load."})
    } else {
        json!({
            "type": "string",
            "description": "The skill to load: a name from the catalog in this tool's \
                            description, or one `search_skills` found."
        })
    };
    let activate = Tool::new(
        ACTIVATE,
        snapshot.tool_description.clone(),
        schema(json!({
            "type": "object",
            "properties": {
                "name": name_schema,
                "arguments": {
                    "type": "string",
                    "description": "Arguments for the skill, as the user gave them \
                                    (substituted for $ARGUMENTS, $0, $1, ...)."
                }
            },
            "required": ["name"],
            "additionalProperties": false
        })),
    )
    .with_title("Activate a skill")
    .with_annotations(read_only());
    let read = Tool::new(
        READ,
        "Read a file of a skill (a reference, script or asset its instructions mention). \
         `path` is relative to the skill folder, for example `references/FORMS.md`; paths \
         that leave the skill folder are refused.",
        schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name."},
                "path": {"type": "string", "description": "The file's path inside the skill folder."}
            },
            "required": ["name", "path"],
            "additionalProperties": false
        })),
    )
    .with_title("Read a skill file")
    .with_annotations(read_only());
    let search = Tool::new(
        SEARCH,
        "Search the available skills by what they do (ranked by relevance over names and \
         descriptions). Use it when no skill in the catalog fits, or the catalog was shortened.",
        schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the task is about."},
                "limit": {
                    "type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS,
                    "description": "Most results to return (default 10)."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })),
    )
    .with_title("Search skills")
    .with_annotations(read_only());
    vec![activate, read, search]
}

/// A tool error the model can act on.
fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

fn string_arg<'a>(args: &'a JsonObject, key: &str) -> Result<Option<&'a str>, CallToolResult> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(tool_error(format!(
            "`{key}` must be a string, not {}",
            json_kind(other)
        ))),
    }
}

fn required<'a>(args: &'a JsonObject, key: &str) -> Result<&'a str, CallToolResult> {
    string_arg(args, key)?.ok_or_else(|| tool_error(format!("`{key}` is required")))
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `activate_skill` for the session `session`.
pub fn activate(
    engine: &Engine,
    snapshot: &Snapshot,
    session: &str,
    args: &JsonObject,
) -> CallToolResult {
    let run = || -> Result<CallToolResult, CallToolResult> {
        let name = required(args, "name")?;
        let arguments = string_arg(args, "arguments")?.unwrap_or("");
        match engine.activate(snapshot, session, name, arguments) {
            Ok(Activated::Content(text)) => Ok(CallToolResult::success(vec![ContentBlock::text(
                text.to_string(),
            )])),
            Ok(Activated::AlreadyActive(notice)) => {
                Ok(CallToolResult::success(vec![ContentBlock::text(notice)]))
            }
            Err(e @ (ActivateError::Unknown(_) | ActivateError::NotModelInvocable(_))) => {
                Err(tool_error(e.to_string()))
            }
            Err(ActivateError::Failed(message)) => {
                tracing::warn!(skill = name, error = %message, "activation failed");
                Err(tool_error(message))
            }
        }
    };
    run().unwrap_or_else(|e| e)
}

/// `read_skill_resource`.
pub fn read(snapshot: &Snapshot, args: &JsonObject) -> CallToolResult {
    let run = || -> Result<CallToolResult, CallToolResult> {
        let name = required(args, "name")?;
        let path = required(args, "path")?;
        let skill = snapshot
            .get(name)
            .ok_or_else(|| tool_error(snapshot.unknown_skill_message(name)))?;
        let resource =
            skilldeck::read_resource(skill, path).map_err(|e| tool_error(e.to_string()))?;
        let file_uri = uri::skill_uri(&skill.name, &resource.path);
        Ok(match resource.content {
            ResourceContent::Text(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            ResourceContent::Binary(bytes) => {
                use base64::Engine as _;
                let blob = base64::engine::general_purpose::STANDARD.encode(&bytes);
                CallToolResult::success(vec![
                    ContentBlock::text(format!(
                        "{} is a binary file ({} bytes, {}); its content is attached.",
                        resource.path,
                        bytes.len(),
                        resource.mime
                    )),
                    ContentBlock::resource(
                        ResourceContents::blob(blob, file_uri).with_mime_type(resource.mime),
                    ),
                ])
            }
        })
    };
    run().unwrap_or_else(|e| e)
}

/// `search_skills`: text for the model and the same hits as structured
/// content.
pub fn search(snapshot: &Snapshot, args: &JsonObject) -> CallToolResult {
    let run = || -> Result<CallToolResult, CallToolResult> {
        let query = required(args, "query")?;
        let limit = match args.get("limit") {
            None | Some(Value::Null) => DEFAULT_SEARCH_RESULTS,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(n) if (1..=MAX_SEARCH_RESULTS as u64).contains(&n) => n as usize,
                _ => {
                    return Err(tool_error(format!(
                        "`limit` must be a whole number from 1 to {MAX_SEARCH_RESULTS}"
                    )));
                }
            },
            Some(other) => {
                return Err(tool_error(format!(
                    "`limit` must be a number, not {}",
                    json_kind(other)
                )));
            }
        };
        let hits = snapshot
            .search_index()
            .search(&SearchQuery::new(query).limit(limit));
        let mut text = String::new();
        let mut results = Vec::with_capacity(hits.len());
        for hit in &hits {
            // Skills turned off are indexed but not served.
            let Some(skill) = snapshot.get(&hit.name) else {
                continue;
            };
            text.push_str(&format!("- {}: {}\n", skill.name, skill.description));
            results.push(json!({
                "name": skill.name,
                "description": skill.description,
                "score": hit.score,
                "model_invocable": skill.model_invocable(),
            }));
        }
        if results.is_empty() {
            text.push_str("No skill matches that query.");
        }
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({ "results": results }));
        Ok(result)
    };
    run().unwrap_or_else(|e| e)
}
