//! The tools face: the host's tools ([`skilldeck_host::tools`]) mapped to
//! MCP. A [`ToolSpec`] becomes a [`Tool`]; a [`ToolOutput`] a successful
//! [`CallToolResult`] (a binary file attached as a blob, search hits also as
//! structured content); a [`ToolError`] a result with `isError: true` whose
//! text tells the model what to do instead. No rule lives here.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ResourceContents, Tool, ToolAnnotations,
};
use serde_json::{Value, json};
use skilldeck_host::tools::{activate_skill, read_skill_resource, search_skills};
use skilldeck_host::{
    ExecToolSpec, FileContent, ToolError, ToolErrorKind, ToolOutput, ToolRun, ToolSpec,
};

use crate::engine::{Engine, Snapshot};
use crate::uri;

/// Tool name: load a skill.
pub const ACTIVATE: &str = activate_skill::NAME;
/// Tool name: read a file of a skill.
pub const READ: &str = read_skill_resource::NAME;
/// Tool name: search the skills.
pub const SEARCH: &str = search_skills::NAME;

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// One host tool spec as an MCP tool.
pub fn tool(spec: ToolSpec) -> Tool {
    Tool::new(spec.name, spec.description, schema(spec.input_schema))
        .with_title(spec.title)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(spec.read_only)
                .destructive(!spec.read_only),
        )
}

/// The tools for `snapshot`: none when no skill is served.
pub fn definitions(snapshot: &Snapshot) -> Vec<Tool> {
    skilldeck_host::tools::specs(snapshot)
        .into_iter()
        .map(tool)
        .collect()
}

/// A tool that runs skill code (a skill tool, `run_skill_script`) as an
/// MCP tool: neither read-only nor idempotent (it runs a program).
pub fn exec_tool(spec: ExecToolSpec) -> Tool {
    Tool::new(spec.name, spec.description, schema(spec.input_schema))
        .with_title(spec.title)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false),
        )
}

/// A run of skill code as an MCP tool result: its stdout as text, and as
/// `structuredContent` when it is JSON; the files `run_code` returned
/// (`outputs/`) as embedded resources with their MIME types (text inline,
/// anything else as a base64 blob); a failed, timed-out or refused run is
/// `isError: true` with the host's account of what happened.
pub fn exec_result(run: Result<ToolRun, ToolError>) -> CallToolResult {
    match run {
        Ok(run) => {
            let mut content = vec![ContentBlock::text(run.text)];
            for file in run.files {
                let file_uri = uri::output_uri(&file.name);
                let resource = match file.text() {
                    Some(text) => ResourceContents::text(text, file_uri),
                    None => {
                        use base64::Engine as _;
                        let blob = base64::engine::general_purpose::STANDARD.encode(&file.data);
                        ResourceContents::blob(blob, file_uri)
                    }
                };
                content.push(ContentBlock::resource(
                    resource.with_mime_type(file.mime_type),
                ));
            }
            let mut result = CallToolResult::success(content);
            result.structured_content = run.structured;
            result
        }
        Err(error) => tool_error(error),
    }
}

/// A host-implemented tool's answer as an MCP tool result (a server that
/// embeds the host and registers handlers; `skilldeck serve` registers
/// none, so it never offers such a tool).
pub fn handled_result(handled: skilldeck_host::HandledCall) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(handled.text)]);
    result.structured_content = Some(handled.structured);
    result
}

/// A tool error the model can act on.
fn tool_error(error: ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(error.message)])
}

/// A host tool result as an MCP tool result.
pub fn result(output: Result<ToolOutput, ToolError>) -> CallToolResult {
    let output = match output {
        Ok(output) => output,
        Err(error) => return tool_error(error),
    };
    match output {
        ToolOutput::File(file) => match &file.content {
            FileContent::Text(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            FileContent::Binary(bytes) => {
                use base64::Engine as _;
                let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
                let file_uri = uri::skill_uri(&file.skill, &file.path);
                CallToolResult::success(vec![
                    ContentBlock::text(file.text()),
                    ContentBlock::resource(
                        ResourceContents::blob(blob, file_uri).with_mime_type(file.mime),
                    ),
                ])
            }
        },
        ToolOutput::Search(ref hits) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(output.text())]);
            result.structured_content = Some(json!({ "results": hits }));
            result
        }
        ToolOutput::Activation(_) => {
            CallToolResult::success(vec![ContentBlock::text(output.text())])
        }
    }
}

/// True when `error` is not a tool result but a protocol error (the tool
/// does not exist).
pub fn is_protocol_error(error: &ToolError) -> bool {
    error.kind == ToolErrorKind::UnknownTool
}

/// `activate_skill` for the session `session`.
pub fn activate(
    engine: &Engine,
    snapshot: &Snapshot,
    session: &str,
    args: &JsonObject,
) -> CallToolResult {
    let output = activate_skill::call(engine.host(), snapshot, session, args);
    if let Err(e) = &output
        && e.kind == ToolErrorKind::Failed
    {
        tracing::warn!(error = %e, "activation failed");
    }
    result(output)
}

/// `read_skill_resource`.
pub fn read(engine: &Engine, snapshot: &Snapshot, args: &JsonObject) -> CallToolResult {
    result(read_skill_resource::call(engine.host(), snapshot, args))
}

/// `search_skills`: text for the model and the same hits as structured
/// content.
pub fn search(snapshot: &Snapshot, args: &JsonObject) -> CallToolResult {
    result(search_skills::call(snapshot, args))
}
