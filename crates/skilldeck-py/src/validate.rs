//! `skilldeck.validate(path, mode="strict")`: the core's validator on one
//! skill folder (or `SKILL.md`), its diagnostics as Python objects.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::Deserialize;
use serde::de::IntoDeserializer;
use serde::de::value::{Error as ValueError, StrDeserializer};

use skilldeck::{Mode, ValidationOptions};

use crate::diagnostic::Diagnostic;

/// The core's mode named `text` (`strict` or `lenient`), with serde's
/// message naming the accepted ones otherwise.
fn mode(text: &str) -> PyResult<Mode> {
    let de: StrDeserializer<'_, ValueError> = text.into_deserializer();
    Mode::deserialize(de).map_err(|e| PyValueError::new_err(format!("mode: {e}")))
}

/// Validates the skill at `path`: every problem, in file order (empty when
/// valid).
#[pyfunction]
#[pyo3(signature = (path, mode = "strict"))]
pub fn validate(py: Python<'_>, path: PathBuf, mode: &str) -> PyResult<Vec<Diagnostic>> {
    let options = match self::mode(mode)? {
        Mode::Strict => ValidationOptions::strict(),
        Mode::Lenient => ValidationOptions::lenient(),
    };
    let report = py.detach(|| skilldeck::validate_path(&path, &options));
    Ok(report.diagnostics.iter().map(Diagnostic::from).collect())
}
