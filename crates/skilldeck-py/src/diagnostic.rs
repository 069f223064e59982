//! [`Diagnostic`]: the core's diagnostic as a Python value.

use pyo3::prelude::*;

/// One problem, located in a file (the core's `Diagnostic`).
#[pyclass(frozen, get_all, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Stable kebab-case code (`name-too-long`, ...).
    pub code: &'static str,
    /// `error` or `warning`.
    pub severity: String,
    /// What is wrong.
    pub message: String,
    /// The file, when the problem is in one.
    pub file: Option<String>,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column, in characters.
    pub column: Option<u32>,
    /// How to fix it, when known.
    pub help: Option<String>,
    text: String,
}

impl From<&skilldeck::Diagnostic> for Diagnostic {
    fn from(d: &skilldeck::Diagnostic) -> Self {
        Diagnostic {
            code: d.code.as_str(),
            severity: d.severity.to_string(),
            message: d.message.clone(),
            file: d.file.as_ref().map(|f| f.to_string_lossy().into_owned()),
            line: d.line,
            column: d.column,
            help: d.help.clone(),
            text: d.to_string(),
        }
    }
}

#[pymethods]
impl Diagnostic {
    /// True for errors.
    #[getter]
    fn is_error(&self) -> bool {
        self.severity == skilldeck::Severity::Error.to_string()
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!("<Diagnostic {}>", self.text)
    }
}
