//! `activate_skill` (`name`, optional `arguments` and `reload`): a skill's
//! instructions the first time in a session and whenever the arguments
//! change, the short notice for the same arguments, and again on `reload`.

use serde_json::{Map, Value, json};

use super::args;
use super::output::ToolOutput;
use super::spec::ToolSpec;
use crate::host::Host;
use crate::snapshot::Snapshot;
use crate::tool_error::ToolError;

/// The tool's name.
pub const NAME: &str = "activate_skill";

/// The spec for `snapshot`: its description carries the catalog; `name` is
/// an enum of the model-invocable skills while there are at most
/// `max_tool_name_enum` of them, else a plain string.
pub fn spec(snapshot: &Snapshot) -> ToolSpec {
    let names = &snapshot.model_names;
    let name_schema = if !names.is_empty() && names.len() <= snapshot.options().max_tool_name_enum {
        json!({"type": "string", "enum": names, "description": "The skill to load."})
    } else {
        json!({
            "type": "string",
            "description": "The skill to load: a name from the catalog in this tool's \
                            description, or one `search_skills` found."
        })
    };
    ToolSpec {
        name: NAME,
        title: "Activate a skill",
        description: snapshot.tool_description.clone(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "name": name_schema,
                "arguments": {
                    "type": "string",
                    "description": "Arguments for the skill, as the user gave them \
                                    (substituted for $ARGUMENTS, $0, $1, ...)."
                },
                "reload": {
                    "type": "boolean",
                    "description": "Send the instructions again although this \
                                    conversation already received them (they are no \
                                    longer in it, e.g. after compaction)."
                }
            },
            "required": ["name"],
            "additionalProperties": false
        }),
        read_only: true,
    }
}

/// Activates the skill `name` for `session` ([`Host::activate`]).
pub fn call(
    host: &Host,
    snapshot: &Snapshot,
    session: &str,
    arguments: &Map<String, Value>,
) -> Result<ToolOutput, ToolError> {
    args::only(arguments, &["name", "arguments", "reload"])?;
    let name = args::required(arguments, "name")?;
    let skill_arguments = args::string(arguments, "arguments")?.unwrap_or("");
    let reload = args::boolean(arguments, "reload")?.unwrap_or(false);
    host.activate(snapshot, session, name, skill_arguments, reload)
        .map(ToolOutput::Activation)
}
