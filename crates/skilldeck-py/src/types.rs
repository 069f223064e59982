//! The values the module returns, as frozen Python classes. Each holds the
//! host's data (a snapshot, a cached activation) and converts on access, so
//! listing 10,000 skills or answering a cached activation copies nothing it
//! is not asked for.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use skilldeck_host::{CachedActivation, Snapshot};

use crate::diagnostic::Diagnostic;

/// A served skill's metadata (its body is read only on activation).
#[pyclass(frozen, module = "skilldeck._native")]
pub struct Skill {
    snapshot: Arc<Snapshot>,
    index: usize,
}

impl Skill {
    pub(crate) fn new(snapshot: Arc<Snapshot>, index: usize) -> Self {
        Skill { snapshot, index }
    }

    fn skill(&self) -> PyResult<&skilldeck::Skill> {
        self.snapshot.deck.skills().get(self.index).ok_or_else(|| {
            // Indices come from the same snapshot: never out of range.
            pyo3::exceptions::PyIndexError::new_err("skill index out of range")
        })
    }
}

#[pymethods]
impl Skill {
    /// The skill's name.
    #[getter]
    fn name(&self) -> PyResult<&str> {
        Ok(&self.skill()?.name)
    }

    /// Its description.
    #[getter]
    fn description(&self) -> PyResult<&str> {
        Ok(&self.skill()?.description)
    }

    /// The skill folder.
    #[getter]
    fn path(&self) -> PyResult<String> {
        Ok(self.skill()?.dir().to_string_lossy().into_owned())
    }

    /// Its `SKILL.md`.
    #[getter]
    fn skill_md(&self) -> PyResult<String> {
        Ok(self.skill()?.skill_md.to_string_lossy().into_owned())
    }

    /// Where it was found: explicit, project, user, extra or bundled.
    #[getter]
    fn scope(&self) -> PyResult<&'static str> {
        Ok(self.skill()?.scope.as_str())
    }

    /// How hosts expose it: pinned, auto, name-only, manual or off.
    #[getter]
    fn mode(&self) -> PyResult<&'static str> {
        Ok(self.skill()?.mode.as_str())
    }

    /// True when the model may activate it.
    #[getter]
    fn model_invocable(&self) -> PyResult<bool> {
        Ok(skilldeck_host::is_model_invocable(self.skill()?))
    }

    /// True when the user may invoke it.
    #[getter]
    fn user_invocable(&self) -> PyResult<bool> {
        Ok(skilldeck_host::is_user_invocable(self.skill()?))
    }

    /// The frontmatter's `argument-hint`.
    #[getter]
    fn argument_hint(&self) -> PyResult<Option<&str>> {
        Ok(self.skill()?.argument_hint())
    }

    /// The frontmatter's `allowed-tools` (read from the file on access;
    /// the list is empty when the field is absent).
    #[getter]
    fn allowed_tools(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let skill = self.skill()?;
        py.detach(|| skill.frontmatter())
            .map(|fm| fm.allowed_tools)
            .map_err(|e| crate::errors::core(py, e))
    }

    fn __repr__(&self) -> PyResult<String> {
        let s = self.skill()?;
        Ok(format!(
            "<Skill {} ({}, {})>",
            s.name,
            s.scope,
            s.mode.as_str()
        ))
    }
}

enum Answer {
    Content(Arc<CachedActivation>),
    /// The text the host delivered in a conversation (dynamic-context
    /// output included), with the cached activation's structure.
    Delivered(Arc<CachedActivation>, Arc<str>),
    AlreadyActive(String),
}

/// What activating a skill answered.
#[pyclass(frozen, module = "skilldeck._native")]
pub struct Activation {
    name: String,
    answer: Answer,
}

impl Activation {
    pub(crate) fn content(name: String, cached: Arc<CachedActivation>) -> Self {
        Activation {
            name,
            answer: Answer::Content(cached),
        }
    }

    /// What the host delivered in a conversation: `text` is the model's
    /// text as rendered there (with dynamic context when it ran), `cached`
    /// gives the body, folder and files.
    pub(crate) fn delivered(name: String, cached: Arc<CachedActivation>, text: Arc<str>) -> Self {
        Activation {
            name,
            answer: Answer::Delivered(cached, text),
        }
    }

    pub(crate) fn notice(name: String, notice: String) -> Self {
        Activation {
            name,
            answer: Answer::AlreadyActive(notice),
        }
    }

    fn cached(&self) -> Option<&skilldeck::Activation> {
        match &self.answer {
            Answer::Content(c) | Answer::Delivered(c, _) => Some(c.activation()),
            Answer::AlreadyActive(_) => None,
        }
    }
}

#[pymethods]
impl Activation {
    /// The skill's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The text for the model: the instructions in the client guide's
    /// `<skill_content>` envelope, or the short "already active" notice.
    #[getter]
    fn text(&self) -> &str {
        match &self.answer {
            Answer::Content(c) => c.rendered(skilldeck::ActivationFormat::Xml),
            Answer::Delivered(_, text) => text,
            Answer::AlreadyActive(notice) => notice,
        }
    }

    /// True when the conversation already had the instructions (`text` is
    /// the notice; `body` is None).
    #[getter]
    fn already_active(&self) -> bool {
        matches!(self.answer, Answer::AlreadyActive(_))
    }

    /// The body: frontmatter removed, arguments substituted.
    #[getter]
    fn body(&self) -> Option<&str> {
        self.cached().map(|a| a.body.as_str())
    }

    /// The skill folder (relative paths in the body are relative to it).
    #[getter]
    fn skill_dir(&self) -> Option<String> {
        self.cached()
            .map(|a| a.skill_dir.to_string_lossy().into_owned())
    }

    /// The skill's files (without `SKILL.md`), sorted, as far as the
    /// listing limit goes.
    #[getter]
    fn resources(&self) -> Vec<String> {
        self.cached()
            .map(|a| a.resources.iter().map(|r| r.path.clone()).collect())
            .unwrap_or_default()
    }

    /// The text in another rendering: `xml` (default), `text` (Claude
    /// Code's "Base directory" form) or `json`.
    #[pyo3(signature = (format = "xml"))]
    fn render(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        let format = match format {
            "xml" => skilldeck::ActivationFormat::Xml,
            "text" => skilldeck::ActivationFormat::Text,
            "json" => skilldeck::ActivationFormat::Json,
            other => {
                return Err(crate::errors::core(
                    py,
                    skilldeck::Error::InvalidValue {
                        what: "activation format",
                        value: other.to_owned(),
                        expected: "xml, text or json",
                    },
                ));
            }
        };
        Ok(match &self.answer {
            // The host renders a conversation's activation in xml: that
            // text (with its dynamic-context output) is the xml rendering.
            Answer::Delivered(_, text) if format == skilldeck::ActivationFormat::Xml => {
                text.to_string()
            }
            Answer::Content(c) | Answer::Delivered(c, _) => c.rendered(format).to_owned(),
            Answer::AlreadyActive(notice) => notice.clone(),
        })
    }

    fn __str__(&self) -> &str {
        self.text()
    }

    fn __repr__(&self) -> String {
        format!(
            "<Activation {}{}>",
            self.name,
            if self.already_active() {
                " (already active)"
            } else {
                ""
            }
        )
    }
}

/// A file of a skill.
#[pyclass(frozen, module = "skilldeck._native")]
pub struct Resource {
    skill: String,
    path: String,
    mime: &'static str,
    size: u64,
    content: skilldeck::ResourceContent,
}

impl Resource {
    pub(crate) fn new(skill: String, resource: skilldeck::Resource) -> Self {
        Resource {
            skill,
            path: resource.path,
            mime: resource.mime,
            size: resource.size,
            content: resource.content,
        }
    }
}

#[pymethods]
impl Resource {
    /// The skill's name.
    #[getter]
    fn skill(&self) -> &str {
        &self.skill
    }
    /// The path relative to the skill folder, normalised.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }
    /// Its MIME type (from the extension).
    #[getter]
    fn mime(&self) -> &'static str {
        self.mime
    }
    /// Its size in bytes.
    #[getter]
    fn size(&self) -> u64 {
        self.size
    }
    /// True when the file is UTF-8 text (`text` is set).
    #[getter]
    fn is_text(&self) -> bool {
        matches!(self.content, skilldeck::ResourceContent::Text(_))
    }
    /// The text, or None for a binary file.
    #[getter]
    fn text(&self) -> Option<&str> {
        match &self.content {
            skilldeck::ResourceContent::Text(t) => Some(t),
            skilldeck::ResourceContent::Binary(_) => None,
        }
    }
    /// The bytes.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        match &self.content {
            skilldeck::ResourceContent::Text(t) => PyBytes::new(py, t.as_bytes()),
            skilldeck::ResourceContent::Binary(b) => PyBytes::new(py, b),
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "<Resource {}/{} ({} bytes, {})>",
            self.skill, self.path, self.size, self.mime
        )
    }
}

/// One skill a search found.
#[pyclass(frozen, get_all, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// BM25 score (higher is better).
    pub score: f64,
    /// Where it was found.
    pub scope: &'static str,
    /// Whether the model may activate it.
    pub model_invocable: bool,
}

#[pymethods]
impl SearchHit {
    fn __repr__(&self) -> String {
        format!("<SearchHit {} {:.3}>", self.name, self.score)
    }
}

/// The activation cache's counters (since the deck was made) and sizes.
#[pyclass(frozen, get_all, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct CacheStats {
    /// Answered from the cache.
    pub hits: u64,
    /// Activated from disk (reloads included).
    pub misses: u64,
    /// Misses because `SKILL.md` changed since it was cached.
    pub reloads: u64,
    /// Entries dropped to stay within the limits.
    pub evictions: u64,
    /// Entries now.
    pub entries: usize,
    /// Body bytes now.
    pub bytes: usize,
    /// hits / (hits + misses), 0 before the first call.
    pub hit_rate: f64,
}

impl From<skilldeck_host::CacheStats> for CacheStats {
    fn from(s: skilldeck_host::CacheStats) -> Self {
        CacheStats {
            hits: s.hits,
            misses: s.misses,
            reloads: s.reloads,
            evictions: s.evictions,
            entries: s.entries,
            bytes: s.bytes,
            hit_rate: s.hit_rate,
        }
    }
}

#[pymethods]
impl CacheStats {
    fn __repr__(&self) -> String {
        format!(
            "<CacheStats hits={} misses={} entries={} hit_rate={:.3}>",
            self.hits, self.misses, self.entries, self.hit_rate
        )
    }
}

/// What a reload found.
#[pyclass(frozen, get_all, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct Reload {
    /// True when the catalog changed (the new deck is in use).
    pub catalog_changed: bool,
    /// The generation now current.
    pub generation: u64,
    /// Skills discovered.
    pub skills: usize,
    /// Errors that kept skill folders out of the deck.
    pub errors: Vec<Diagnostic>,
}

/// One agent tool as data (the host's `ToolSpec`).
#[pyclass(frozen, get_all, module = "skilldeck._native")]
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: &'static str,
    /// A human-readable title.
    pub title: &'static str,
    /// What the model reads about the tool.
    pub description: String,
    /// The JSON Schema of its arguments, as JSON text.
    pub input_schema_json: String,
    /// True when calling it changes nothing.
    pub read_only: bool,
}
