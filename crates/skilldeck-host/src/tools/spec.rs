//! [`ToolSpec`]: one tool as data.

use serde_json::Value;

/// One tool as data: what a face lists.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name (`activate_skill`, ...).
    pub name: &'static str,
    /// A human-readable title.
    pub title: &'static str,
    /// What the model reads about the tool.
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub input_schema: Value,
    /// True when calling it changes nothing (every skill tool is).
    pub read_only: bool,
}
