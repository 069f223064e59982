//! Running skill code from Python: `Deck.run` and `Deck.call_tool` bind the
//! host's execution service ([`skilldeck_host::Execution`]), which checks
//! arguments against the tool's schema, picks the file, applies the
//! `[exec]` policy and the sandbox. This module only converts values.

use pyo3::prelude::*;
use pyo3::types::PyAny;

use skilldeck_exec::{CallContext, Input};
use skilldeck_host::execution::Overrides;
use skilldeck_host::{ToolError, ToolErrorKind, ToolRun};

/// Who asks, as the script sees it (`SKILLDECK_*` variables) and the audit
/// line records it: the Python process, with the caller's trace id as the
/// call id when given.
pub(crate) fn context(trace_id: Option<&str>) -> CallContext {
    let mut context = CallContext::local("python");
    if let Some(id) = trace_id {
        id.clone_into(&mut context.call_id);
    }
    context
}

/// The overrides of one run from Python: `timeout` (seconds) replaces
/// `[exec] timeout-secs`, else the refusal of a timeout out of range.
/// Nothing else of the policy changes, and the run still goes through the
/// deck's one execution service (its concurrency cap holds).
pub(crate) fn overrides(timeout: Option<f64>) -> Result<Overrides, ToolError> {
    let Some(secs) = timeout else {
        return Ok(Overrides::default());
    };
    let timeout = skilldeck_exec::timeout_from_secs(secs)
        .map_err(|message| ToolError::new(ToolErrorKind::InvalidArguments, message))?;
    Ok(Overrides {
        timeout: Some(timeout),
        profile: None,
    })
}

/// A successful run (exit code 0): its output and how it ended.
#[pyclass(frozen, get_all, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The skill whose file ran.
    pub skill: String,
    /// The tool's full name (`{skill}__{tool}`), or `run_skill_script`.
    pub tool: String,
    /// The file that ran, relative to the skill folder.
    pub path: String,
    /// The exit code (0 for a result; a failure raises instead).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// True when the timeout stopped it.
    pub timed_out: bool,
    /// Standard output (invalid UTF-8 replaced).
    pub stdout: String,
    /// Standard error (invalid UTF-8 replaced).
    pub stderr: String,
    /// Standard output went over the output cap.
    pub stdout_truncated: bool,
    /// Standard error went over the output cap.
    pub stderr_truncated: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// What the model would read: stdout, with a note when it was cut.
    pub text: String,
    /// Stdout as JSON text when it parsed (an object; other values as
    /// `{"result": value}`), else `None`.
    pub structured_json: Option<String>,
    /// The files `run_code` returned from its work folder's `outputs/`
    /// (none for a script or a skill tool).
    pub outputs: Vec<OutputFile>,
}

/// A file `run_code` wrote under `outputs/`.
#[pyclass(frozen, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct OutputFile {
    /// Its path under `outputs/`, e.g. `chart.png`.
    #[pyo3(get)]
    pub name: String,
    /// Its MIME type (by extension).
    #[pyo3(get)]
    pub mime_type: String,
    data: Vec<u8>,
}

#[pymethods]
impl OutputFile {
    /// Its bytes.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.data)
    }

    fn __repr__(&self) -> String {
        format!(
            "<OutputFile {} {} {} bytes>",
            self.name,
            self.mime_type,
            self.data.len()
        )
    }
}

impl From<ToolRun> for RunResult {
    fn from(run: ToolRun) -> Self {
        let o = &run.outcome;
        RunResult {
            exit_code: o.exit_code,
            signal: o.signal,
            timed_out: o.timed_out,
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            stdout_truncated: o.stdout_truncated,
            stderr_truncated: o.stderr_truncated,
            duration_ms: u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX),
            structured_json: run.structured.as_ref().map(|v| v.to_string()),
            outputs: run
                .files
                .into_iter()
                .map(|f| OutputFile {
                    name: f.name,
                    mime_type: f.mime_type.to_owned(),
                    data: f.data,
                })
                .collect(),
            skill: run.skill,
            tool: run.tool,
            path: run.path,
            text: run.text,
        }
    }
}

#[pymethods]
impl RunResult {
    /// The structured result (parsed `structured_json`), or `None`.
    #[getter]
    fn structured(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.structured_json {
            Some(text) => Ok(py
                .import("json")?
                .call_method1("loads", (text.as_str(),))?
                .unbind()),
            None => Ok(py.None()),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<RunResult {} {} exit_code={:?} duration_ms={}>",
            self.skill, self.path, self.exit_code, self.duration_ms
        )
    }
}

/// Standard input for a run: text or bytes, else nothing.
pub(crate) fn stdin(value: Option<&Bound<'_, PyAny>>) -> PyResult<Input> {
    match value {
        None => Ok(Input::Null),
        Some(v) if v.is_none() => Ok(Input::Null),
        Some(v) => {
            if let Ok(text) = v.extract::<String>() {
                Ok(Input::Bytes(text.into_bytes()))
            } else {
                Ok(Input::Bytes(v.extract::<Vec<u8>>()?))
            }
        }
    }
}

/// A tool a skill declares (`tools:` in its frontmatter), as data.
#[pyclass(frozen, get_all, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct SkillToolInfo {
    /// `{skill}__{tool}`: the name agents call it by.
    pub full_name: String,
    /// The skill that declares it.
    pub skill: String,
    /// The tool's name within its skill.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// The JSON Schema of its arguments, as JSON text.
    pub input_schema_json: String,
    /// The script it runs (relative to the skill folder); `None` when the
    /// host implements it (the application registers a handler).
    pub run: Option<String>,
    /// True when the skill names no script: a handler registered with
    /// `Deck.register_tool_handler` answers it.
    pub host_implemented: bool,
}

impl From<skilldeck_host::ResolvedTool<'_>> for SkillToolInfo {
    fn from(t: skilldeck_host::ResolvedTool<'_>) -> Self {
        SkillToolInfo {
            full_name: t.full_name.to_owned(),
            skill: t.skill.name.clone(),
            name: t.tool.name.to_string(),
            description: t.tool.description.clone(),
            input_schema_json: t.tool.input_schema.to_string(),
            run: t.tool.run.clone(),
            host_implemented: t.tool.is_host_implemented(),
        }
    }
}

/// A Python callable answering a host-implemented tool: called with the
/// arguments as a dict (already checked against the tool's schema); its
/// return value (JSON-serialisable; a `str` is the text as is) is the
/// result, an exception the tool's error.
pub struct PyToolHandler(pub Py<PyAny>);

impl skilldeck_host::ToolHandler for PyToolHandler {
    fn call(&self, call: &skilldeck_host::HandlerCall<'_>) -> Result<serde_json::Value, String> {
        Python::attach(|py| {
            let answer = || -> PyResult<serde_json::Value> {
                let json = py.import("json")?;
                let arguments = json.call_method1("loads", (call.arguments.to_string(),))?;
                let result = self.0.bind(py).call1((arguments,))?;
                if let Ok(text) = result.extract::<String>() {
                    return Ok(serde_json::Value::String(text));
                }
                let text: String = json.call_method1("dumps", (result,))?.extract()?;
                serde_json::from_str(&text).map_err(|e| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "the handler's result is not JSON: {e}"
                    ))
                })
            };
            answer().map_err(|e| {
                let kind = e
                    .get_type(py)
                    .name()
                    .map_or_else(|_| "Exception".to_owned(), |n| n.to_string());
                format!("{kind}: {}", e.value(py))
            })
        })
    }
}
