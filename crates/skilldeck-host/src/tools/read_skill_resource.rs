//! `read_skill_resource` (`name`, `path`): a file of a skill, through the
//! core's safe read (paths that leave the skill folder are refused there).

use serde_json::{Map, Value, json};
use skilldeck::ResourceContent;

use super::{ToolError, ToolOutput, ToolSpec, args};
use crate::snapshot::Snapshot;

/// The tool's name.
pub const NAME: &str = "read_skill_resource";

/// A file's bytes as the tool returns them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    /// UTF-8 text.
    Text(String),
    /// Anything else (a face attaches it, base64 or raw).
    Binary(Vec<u8>),
}

/// A file of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutput {
    /// The skill's name.
    pub skill: String,
    /// The path relative to the skill folder, normalised.
    pub path: String,
    /// Its MIME type (from the extension).
    pub mime: &'static str,
    /// Its size in bytes.
    pub size: u64,
    /// Its content.
    pub content: FileContent,
}

impl FileOutput {
    /// The text for the model: the file's text, or a line saying a binary
    /// file is attached.
    pub fn text(&self) -> String {
        match &self.content {
            FileContent::Text(text) => text.clone(),
            FileContent::Binary(bytes) => format!(
                "{} is a binary file ({} bytes, {}); its content is attached.",
                self.path,
                bytes.len(),
                self.mime
            ),
        }
    }
}

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
pub fn call(snapshot: &Snapshot, arguments: &Map<String, Value>) -> Result<ToolOutput, ToolError> {
    let name = args::required(arguments, "name")?;
    let path = args::required(arguments, "path")?;
    let skill = snapshot.require(name).map_err(ToolError::lookup)?;
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
