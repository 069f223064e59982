//! Errors to JavaScript errors, in one place. The classes live in
//! `npm/errors.cjs` (JavaScript, so they are real subclasses of `Error`);
//! the addon rejects with a napi error whose message is the prefix
//! [`PREFIX`] and a JSON payload `{class, message, kind?, name?,
//! suggestions?, diagnostics?}` that the package turns into the class. The
//! mapping is the Python binding's (`crates/skilldeck-py/src/errors.rs`):
//!
//! | host / core error | class |
//! |---|---|
//! | unknown skill, skill turned off | `SkillNotFoundError` (`.skillName`, `.suggestions`) |
//! | `SKILL.md` or config unreadable / unparsable | `SkillParsingError` (`.diagnostics`) |
//! | resource refused or unreadable | `ResourceError` |
//! | arguments too long, body too large, not model-invocable, a run refused / failed / timed out | `SkillInvocationError` (`.kind`) |
//! | tool arguments not matching the schema, unknown tool | `InvalidArgumentsError` (`.kind`) |
//! | an option value the core does not accept | `InvalidValueError` (Python: `ValueError`) |
//! | anything else | `SkilldeckError` |
//!
//! Messages are the host's and the core's, unchanged.

use serde_json::{Value, json};
use skilldeck_host::{ToolError, ToolErrorKind};

use crate::types::Diagnostic;

/// What every message of a skilldeck error starts with (the package's
/// error conversion looks for it).
pub const PREFIX: &str = "skilldeck-error:";

/// A napi error carrying `class` and the fields of its JavaScript object.
pub fn fail(class: &str, message: &str, mut fields: Value) -> napi::Error {
    if let Value::Object(map) = &mut fields {
        map.insert("class".into(), Value::String(class.to_owned()));
        map.insert("message".into(), Value::String(message.to_owned()));
    }
    napi::Error::from_reason(format!("{PREFIX}{fields}"))
}

/// An option the face was given that the host cannot take.
pub fn invalid_value(message: impl Into<String>) -> napi::Error {
    fail("InvalidValueError", &message.into(), json!({}))
}

/// The error for a core error.
pub fn core(error: &skilldeck::Error) -> napi::Error {
    let message = error.to_string();
    use skilldeck::Error as E;
    match error {
        E::UnknownSkill {
            name, suggestions, ..
        } => fail(
            "SkillNotFoundError",
            &message,
            json!({"skillName": name, "suggestions": suggestions}),
        ),
        E::SkillOff(name) => fail(
            "SkillNotFoundError",
            &message,
            json!({"skillName": name, "suggestions": []}),
        ),
        E::Activation { diagnostic, .. } | E::Frontmatter { diagnostic, .. } => fail(
            "SkillParsingError",
            &message,
            json!({"diagnostics": [Diagnostic::from(&**diagnostic).to_json()]}),
        ),
        E::Config { .. } => fail("SkillParsingError", &message, json!({"diagnostics": []})),
        E::Resource { .. } => fail("ResourceError", &message, json!({})),
        E::ArgumentsTooLong { .. } | E::ActivationTooLarge { .. } => {
            fail("SkillInvocationError", &message, json!({"kind": null}))
        }
        E::InvalidValue { .. } | E::ConflictingOptions(_) | E::InvalidName { .. } => {
            invalid_value(message)
        }
        _ => fail("SkilldeckError", &message, json!({})),
    }
}

/// The error for a host error opening a deck.
pub fn host(error: &skilldeck_host::Error) -> napi::Error {
    match error {
        skilldeck_host::Error::Core(e) => core(e),
        other => fail("SkilldeckError", &other.to_string(), json!({})),
    }
}

/// The error for a failed tool-style call: the core's error it carries
/// decides when there is one, else the kind.
pub fn tool(error: &ToolError) -> napi::Error {
    if let Some(e) = error.core() {
        return core(e);
    }
    if error.kind == ToolErrorKind::UnknownSkill {
        return fail(
            error.kind.binding_class(),
            &error.message,
            json!({"skillName": null, "suggestions": []}),
        );
    }
    let (class, kind) = (error.kind.binding_class(), error.kind.name());
    fail(class, &error.message, json!({"kind": kind}))
}
