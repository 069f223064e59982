//! The version page's "Try it" panel: a form generated from a tool's JSON
//! Schema (one field per property: text, number, integer, a choice for an
//! `enum`, yes/no for a boolean, one line per item for an array of
//! strings, a JSON text area for anything else; a JSON text area for the
//! whole object when the schema has no `properties`), a script picker,
//! and the outcome of the run.
//!
//! This module only turns form fields into the request's JSON: whether the
//! arguments are valid is the tool's schema's decision, made by the host
//! before anything runs (a field that does not parse as its type is sent
//! as the text typed, so the refusal names the field's JSON pointer).

use std::collections::HashMap;

use serde_json::{Map, Value};
use skilldeck_registry::wire::{TestRunResult, TestRunTool};

/// The form field prefix of a tool argument (`arg.<property>`).
pub const ARG_PREFIX: &str = "arg.";
/// The form field of the whole arguments object as JSON.
pub const ARGUMENTS_JSON_FIELD: &str = "arguments_json";

/// How one argument is entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A text input.
    Text,
    /// A number input (any number).
    Number,
    /// A number input (whole numbers).
    Integer,
    /// A choice among the schema's `enum` values (strings).
    Choice,
    /// Unset, yes or no.
    Boolean,
    /// One string per line (an array of strings).
    Lines,
    /// JSON text (any other schema).
    Json,
}

impl FieldKind {
    /// The kind's name, as the template tests it.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Text => "text",
            FieldKind::Number => "number",
            FieldKind::Integer => "integer",
            FieldKind::Choice => "choice",
            FieldKind::Boolean => "boolean",
            FieldKind::Lines => "lines",
            FieldKind::Json => "json",
        }
    }
}

/// One generated field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldView {
    /// The property's name.
    pub name: String,
    /// The form field's name (`arg.<name>`).
    pub key: String,
    /// The input's HTML id.
    pub id: String,
    /// How it is entered: [`FieldKind::as_str`].
    pub kind: &'static str,
    /// The schema's description.
    pub description: String,
    /// Listed in the schema's `required`.
    pub required: bool,
    /// The choices of a [`FieldKind::Choice`].
    pub options: Vec<String>,
    /// What was typed (a refused form keeps it).
    pub value: String,
}

fn kind_of(schema: &Value) -> (FieldKind, Vec<String>) {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let options: Option<Vec<String>> = values
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect();
        return match options {
            Some(options) if !options.is_empty() => (FieldKind::Choice, options),
            _ => (FieldKind::Json, Vec::new()),
        };
    }
    let kind = match schema.get("type").and_then(Value::as_str) {
        Some("string") => FieldKind::Text,
        Some("number") => FieldKind::Number,
        Some("integer") => FieldKind::Integer,
        Some("boolean") => FieldKind::Boolean,
        Some("array")
            if schema
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str)
                == Some("string") =>
        {
            FieldKind::Lines
        }
        _ => FieldKind::Json,
    };
    (kind, Vec::new())
}

/// The properties of an object schema, or `None` when the schema is not
/// one a form can be generated from (then the whole object is JSON).
fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    match schema.get("properties") {
        Some(Value::Object(p)) => Some(p),
        Some(_) => None,
        None if schema.get("type").and_then(Value::as_str) == Some("object") => None,
        None => None,
    }
}

/// The fields of `tool`'s schema, filled with `values` (by form key);
/// `None` when the arguments are entered as one JSON object.
pub fn fields_of(tool: &TestRunTool, values: &HashMap<String, String>) -> Option<Vec<FieldView>> {
    let props = properties(&tool.input_schema)?;
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Some(
        props
            .iter()
            .map(|(name, schema)| {
                let (kind, options) = kind_of(schema);
                let key = format!("{ARG_PREFIX}{name}");
                FieldView {
                    id: format!("try-arg-{name}"),
                    value: values.get(&key).cloned().unwrap_or_default(),
                    key,
                    name: name.clone(),
                    kind: kind.as_str(),
                    description: schema
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    required: required.contains(&name.as_str()),
                    options,
                }
            })
            .collect(),
    )
}

/// The arguments object of a submitted form for `tool`: each non-empty
/// field as its property's type (a number that does not parse stays
/// text, for the schema to refuse with the field's pointer), or the whole
/// object from [`ARGUMENTS_JSON_FIELD`]. An empty field is left out (a
/// required one is then refused by the schema). Err: a JSON field that is
/// not JSON (named).
pub fn arguments_of(tool: &TestRunTool, values: &HashMap<String, String>) -> Result<Value, String> {
    let Some(props) = properties(&tool.input_schema) else {
        let text = values
            .get(ARGUMENTS_JSON_FIELD)
            .map(|t| t.trim())
            .unwrap_or_default();
        if text.is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        return serde_json::from_str(text).map_err(|e| format!("The arguments are not JSON: {e}."));
    };
    let mut out = Map::new();
    for (name, schema) in props {
        let Some(raw) = values.get(&format!("{ARG_PREFIX}{name}")) else {
            continue;
        };
        let (kind, _) = kind_of(schema);
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        let value = match kind {
            FieldKind::Text | FieldKind::Choice => Value::String(raw.clone()),
            FieldKind::Number => trimmed
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Value::String(raw.clone()), Value::Number),
            FieldKind::Integer => trimmed
                .parse::<i64>()
                .map_or_else(|_| Value::String(raw.clone()), |n| Value::Number(n.into())),
            FieldKind::Boolean => match trimmed {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::String(raw.clone()),
            },
            FieldKind::Lines => Value::Array(
                raw.lines()
                    .map(str::trim_end)
                    .filter(|l| !l.is_empty())
                    .map(|l| Value::String(l.to_owned()))
                    .collect(),
            ),
            FieldKind::Json => serde_json::from_str(trimmed)
                .map_err(|e| format!("The field '{name}' is not JSON: {e}."))?,
        };
        out.insert(name.clone(), value);
    }
    Ok(Value::Object(out))
}

/// A script's arguments: one per line (blank lines skipped).
pub fn script_args(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// How a run ended, for the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunView {
    /// What ran (`tool x` or `script scripts/a.sh`).
    pub what: String,
    /// `exit 0`, `killed by signal 9` or `timed out`.
    pub exit: String,
    /// Exit code 0.
    pub success: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Stdout was cut at the cap.
    pub stdout_truncated: bool,
    /// Stderr was cut at the cap.
    pub stderr_truncated: bool,
    /// The structured result, pretty-printed, when stdout was JSON.
    pub structured: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// What the sandbox refused inside the run, in words.
    pub refusals: Option<String>,
}

impl RunView {
    /// The view of a finished run.
    pub fn of(r: &TestRunResult) -> RunView {
        let o = &r.outcome;
        let exit = if o.timed_out {
            "timed out".to_owned()
        } else if let Some(code) = o.exit_code {
            format!("exit {code}")
        } else if let Some(signal) = o.signal {
            format!("killed by signal {signal}")
        } else {
            "ended".to_owned()
        };
        RunView {
            what: match (&r.tool, &r.script) {
                (Some(t), _) => format!("tool {t}"),
                (_, Some(s)) => format!("script {s}"),
                _ => String::new(),
            },
            exit,
            success: o.success,
            stdout: o.stdout.clone(),
            stderr: o.stderr.clone(),
            stdout_truncated: o.stdout_truncated,
            stderr_truncated: o.stderr_truncated,
            structured: o
                .structured
                .as_ref()
                .and_then(|v| serde_json::to_string_pretty(v).ok()),
            duration_ms: o.duration_ms,
            refusals: o.refusals_summary.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> TestRunTool {
        TestRunTool {
            name: "t".into(),
            full_name: "s__t".into(),
            description: String::new(),
            input_schema: schema,
        }
    }

    fn values(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn each_schema_type_gets_its_own_field_and_anything_else_json() {
        let t = tool(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "Where"},
                "days": {"type": "integer"},
                "ratio": {"type": "number"},
                "metric": {"type": "boolean"},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "extra": {"type": "object"}
            },
            "required": ["city"]
        }));
        let fields = fields_of(&t, &HashMap::new()).unwrap();
        let kind = |n: &str| fields.iter().find(|f| f.name == n).map(|f| f.kind);
        assert_eq!(kind("city"), Some("text"));
        assert_eq!(kind("days"), Some("integer"));
        assert_eq!(kind("ratio"), Some("number"));
        assert_eq!(kind("metric"), Some("boolean"));
        assert_eq!(kind("unit"), Some("choice"));
        assert_eq!(kind("tags"), Some("lines"));
        assert_eq!(kind("extra"), Some("json"));
        assert!(fields.iter().any(|f| f.name == "city" && f.required));
    }

    #[test]
    fn a_submitted_form_becomes_typed_arguments_and_empty_fields_are_left_out() {
        let t = tool(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"},
                "metric": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
                "extra": {"type": "object"}, "ratio": {"type": "number"}
            }
        }));
        let args = arguments_of(
            &t,
            &values(&[
                ("arg.city", "Oslo"),
                ("arg.days", "3"),
                ("arg.metric", "true"),
                ("arg.tags", "a\n\nb\n"),
                ("arg.extra", "{\"k\": 1}"),
                ("arg.ratio", ""),
            ]),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"city": "Oslo", "days": 3, "metric": true, "tags": ["a", "b"], "extra": {"k": 1}})
        );
    }

    #[test]
    fn a_number_that_does_not_parse_is_sent_as_typed_for_the_schema_to_refuse() {
        let t = tool(json!({"type": "object", "properties": {"days": {"type": "integer"}}}));
        let args = arguments_of(&t, &values(&[("arg.days", "three")])).unwrap();
        assert_eq!(args, json!({"days": "three"}));
    }

    #[test]
    fn a_schema_without_properties_takes_the_whole_object_as_json() {
        let t = tool(json!({"type": "object"}));
        assert!(fields_of(&t, &HashMap::new()).is_none());
        let args = arguments_of(&t, &values(&[(ARGUMENTS_JSON_FIELD, "{\"a\": [1]}")])).unwrap();
        assert_eq!(args, json!({"a": [1]}));
        assert!(arguments_of(&t, &values(&[(ARGUMENTS_JSON_FIELD, "{nope")])).is_err());
    }
}
