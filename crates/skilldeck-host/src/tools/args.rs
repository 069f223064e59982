//! Argument checking shared by the tools: the wording the model sees.

use serde_json::{Map, Value};

use crate::tool_error::{ToolError, ToolErrorKind};

fn invalid(message: String) -> ToolError {
    ToolError::new(ToolErrorKind::InvalidArguments, message)
}

/// What a JSON value is, for messages ("a number", ...).
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Enforces the schema's `additionalProperties: false`: an argument not
/// in `accepted` is refused, naming it and the accepted ones (the first
/// unknown key in the object's order).
pub(crate) fn only(args: &Map<String, Value>, accepted: &[&str]) -> Result<(), ToolError> {
    let Some(unknown) = args.keys().find(|k| !accepted.contains(&k.as_str())) else {
        return Ok(());
    };
    let list = accepted
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Err(invalid(format!(
        "unknown argument `{unknown}`; the accepted arguments are {list}"
    )))
}

/// An optional string argument (absent and `null` are `None`).
pub(crate) fn string<'a>(
    args: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(invalid(format!(
            "`{key}` must be a string, not {}",
            json_kind(other)
        ))),
    }
}

/// An optional boolean argument (absent and `null` are `None`).
pub(crate) fn boolean(args: &Map<String, Value>, key: &str) -> Result<Option<bool>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(invalid(format!(
            "`{key}` must be true or false, not {}",
            json_kind(other)
        ))),
    }
}

/// A required string argument.
pub(crate) fn required<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    string(args, key)?.ok_or_else(|| invalid(format!("`{key}` is required")))
}

/// An optional whole number from 1 to `max`, else `default`.
pub(crate) fn count(
    args: &Map<String, Value>,
    key: &str,
    default: usize,
    max: usize,
) -> Result<usize, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(invalid(format!(
                "`{key}` must be a whole number from 1 to {max}"
            ))),
        },
        Some(other) => Err(invalid(format!(
            "`{key}` must be a number, not {}",
            json_kind(other)
        ))),
    }
}
