//! `read_skill_resource` (`name`, `path`): a file of a skill, through the
//! core's safe read (paths that leave the skill folder are refused there).

use serde_json::{Map, Value, json};
use skilldeck::ResourceContent;

use super::args;
use super::output::{FileContent, FileOutput, ToolOutput};
use super::spec::ToolSpec;
use crate::snapshot::Snapshot;
use crate::tool_error::ToolError;

/// The tool's name.
pub const NAME: &str = "read_skill_resource";

/// The spec (the same for every snapshot).
pub fn spec(_snapshot: &Snapshot) -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "Read a skill file",
        description: "Read a file of a skill (a reference, script or asset its instructions \
                      mention). `path` is relative to the skill folder, for example \
                      `references/FORMS.md`; paths that leave the skill folder are refused."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name."},
                "path": {"type": "string", "description": "The file's path inside the skill folder."}
            },
            "required": ["name", "path"],
            "additionalProperties": false
        }),
        read_only: true,
    }
}

/// Reads the file `path` of the served skill `name`.
pub fn call(
    host: &crate::host::Host,
    snapshot: &Snapshot,
    arguments: &Map<String, Value>,
) -> Result<ToolOutput, ToolError> {
    args::only(arguments, &["name", "path"])?;
    let name = args::required(arguments, "name")?;
    let path = args::required(arguments, "path")?;
    let skill = snapshot.require(name).map_err(ToolError::lookup)?;
    host.ensure_local(skill).map_err(ToolError::failed)?;
    let resource = skilldeck::read_resource(skill, path).map_err(ToolError::failed)?;
    Ok(ToolOutput::File(FileOutput {
        skill: skill.name.clone(),
        path: resource.path,
        mime: resource.mime,
        size: resource.size,
        content: match resource.content {
            ResourceContent::Text(text) => FileContent::Text(text),
            ResourceContent::Binary(bytes) => FileContent::Binary(bytes),
        },
    }))
}
