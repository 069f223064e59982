//! Errors to Python exceptions, in one place. The classes live in
//! `skilldeck._errors` (Python, so they take keyword attributes):
//!
//! | host / core error | exception |
//! |---|---|
//! | unknown skill, skill turned off | `SkillNotFoundError` (`.name`, `.suggestions`) |
//! | `SKILL.md` unreadable or unsplittable on activation, frontmatter unreadable, config file malformed | `SkillParsingError` (`.diagnostics`) |
//! | resource refused or unreadable | `ResourceError` |
//! | arguments too long, body too large, not model-invocable | `SkillInvocationError` |
//! | a run refused, failed (non-zero exit, signal) or timed out | `SkillInvocationError` (`.kind`: `denied`, `unavailable`, `busy`, `execution_failed`, `timed_out`, `failed`) |
//! | tool arguments that do not match the schema, unknown tool | `InvalidArgumentsError` (a `ValueError`; `.kind`; the message names the failing field) |
//! | an option value the core does not accept | `ValueError` (the core's message) |
//! | a registry that refuses, cannot be reached, or serves a skill that does not verify (`Deck.from_registry`) | `RegistryError` (`.status`: the HTTP status when the registry answered) |
//! | anything else | `SkilldeckError` |
//!
//! Messages are the host's and the core's, unchanged.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use skilldeck_host::{ToolError, ToolErrorKind};

use crate::diagnostic::Diagnostic;

const ERRORS_MODULE: &str = "skilldeck._errors";

/// An instance of `skilldeck._errors.<class>` with `message` and `kwargs`.
fn raise(py: Python<'_>, class: &str, message: &str, kwargs: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = py.import(ERRORS_MODULE)?.getattr(class)?;
        let kw = PyDict::new(py);
        for (k, v) in kwargs {
            kw.set_item(*k, v)?;
        }
        let value = cls.call((message,), Some(&kw))?;
        Ok(PyErr::from_value(value))
    };
    // If the classes cannot be imported (a broken install), that error says so.
    build().unwrap_or_else(|e| e)
}

fn diagnostics_list(py: Python<'_>, diagnostics: &[skilldeck::Diagnostic]) -> PyResult<Py<PyAny>> {
    let items = diagnostics
        .iter()
        .map(|d| Py::new(py, Diagnostic::from(d)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any().unbind())
}

fn text_list(py: Python<'_>, items: &[String]) -> Py<PyAny> {
    match PyList::new(py, items) {
        Ok(list) => list.into_any().unbind(),
        Err(_) => py.None(),
    }
}

/// The exception for a core error.
pub(crate) fn core(py: Python<'_>, error: skilldeck::Error) -> PyErr {
    core_ref(py, &error)
}

/// [`core`] of a borrowed error (one a [`ToolError`] carries).
fn core_ref(py: Python<'_>, error: &skilldeck::Error) -> PyErr {
    let message = error.to_string();
    use skilldeck::Error as E;
    match error {
        E::UnknownSkill {
            name, suggestions, ..
        } => raise(
            py,
            "SkillNotFoundError",
            &message,
            &[
                (
                    "name",
                    name.clone()
                        .into_pyobject(py)
                        .map_or_else(|_| py.None(), |n| n.into_any().unbind()),
                ),
                ("suggestions", text_list(py, suggestions)),
            ],
        ),
        E::SkillOff(name) => raise(
            py,
            "SkillNotFoundError",
            &message,
            &[(
                "name",
                name.clone()
                    .into_pyobject(py)
                    .map_or_else(|_| py.None(), |n| n.into_any().unbind()),
            )],
        ),
        E::Activation { diagnostic, .. } | E::Frontmatter { diagnostic, .. } => {
            match diagnostics_list(py, std::slice::from_ref(diagnostic)) {
                Ok(list) => raise(py, "SkillParsingError", &message, &[("diagnostics", list)]),
                Err(e) => e,
            }
        }
        E::Config { .. } => raise(py, "SkillParsingError", &message, &[]),
        E::Resource { .. } => raise(py, "ResourceError", &message, &[]),
        E::ArgumentsTooLong { .. } | E::ActivationTooLarge { .. } => {
            raise(py, "SkillInvocationError", &message, &[])
        }
        E::InvalidValue { .. } | E::ConflictingOptions(_) | E::InvalidName { .. } => {
            PyValueError::new_err(message)
        }
        _ => raise(py, "SkilldeckError", &message, &[]),
    }
}

/// The exception for a source's error (`Deck.from_registry`, its
/// `reload`): the registry refused or could not be reached, a skill did
/// not verify: `RegistryError` (`.status` when the registry answered);
/// a core error as [`core`] maps it.
pub(crate) fn source(py: Python<'_>, error: skilldeck_source::Error) -> PyErr {
    let message = error.to_string();
    match error {
        skilldeck_source::Error::Core(e) => core(py, e),
        skilldeck_source::Error::Client(e) => {
            let status = e.status().map_or_else(
                || py.None(),
                |s| {
                    s.into_pyobject(py)
                        .map_or_else(|_| py.None(), |n| n.into_any().unbind())
                },
            );
            raise(py, "RegistryError", &message, &[("status", status)])
        }
        _ => raise(py, "RegistryError", &message, &[]),
    }
}

/// The exception for a failed tool-style call: the core's error it carries
/// ([`ToolError::core`]) decides when there is one, else the kind.
pub(crate) fn tool(py: Python<'_>, error: ToolError) -> PyErr {
    // The core's error behind it keeps its structure (suggestions,
    // diagnostics): the host carries it, nothing is asked again.
    if let Some(e) = error.core() {
        return core_ref(py, e);
    }
    if error.kind == ToolErrorKind::UnknownSkill {
        return raise(py, error.kind.binding_class(), &error.message, &[]);
    }
    let (class, kind) = (error.kind.binding_class(), error.kind.name());
    let kind = kind
        .into_pyobject(py)
        .map_or_else(|_| py.None(), |k| k.into_any().unbind());
    raise(py, class, &error.message, &[("kind", kind)])
}
