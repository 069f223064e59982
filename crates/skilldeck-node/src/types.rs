//! The values the addon hands JavaScript: plain objects (`#[napi(object)]`),
//! built from the host's types by conversion only.

use napi_derive::napi;
use serde_json::{Value, json};

/// Counts to JavaScript numbers (exact below 2^53; sizes never get there).
#[allow(clippy::cast_precision_loss)]
pub(crate) fn number(n: u64) -> f64 {
    n as f64
}

/// A problem discovery or validation found.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Stable code (e.g. `E-NAME-MISMATCH`).
    pub code: String,
    /// `error`, `warning` or `info`.
    pub severity: String,
    /// What is wrong.
    pub message: String,
    /// The file, when known.
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
    /// How to fix it, when known.
    pub help: Option<String>,
    /// The whole diagnostic as one line (as the CLI prints it).
    pub text: String,
    /// True for errors.
    pub is_error: bool,
}

impl From<&skilldeck::Diagnostic> for Diagnostic {
    fn from(d: &skilldeck::Diagnostic) -> Self {
        let severity = d.severity.to_string();
        Diagnostic {
            code: d.code.as_str().to_owned(),
            is_error: severity == "error",
            severity,
            message: d.message.clone(),
            file: d.file.as_ref().map(|f| f.to_string_lossy().into_owned()),
            line: d.line,
            column: d.column,
            help: d.help.clone(),
            text: d.to_string(),
        }
    }
}

impl Diagnostic {
    /// As the JSON an error object carries.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "code": self.code, "severity": self.severity, "message": self.message,
            "file": self.file, "line": self.line, "column": self.column,
            "help": self.help, "text": self.text, "isError": self.is_error,
        })
    }
}

/// A served skill's metadata (the body is read by `activate`).
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Skill {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The skill folder.
    pub path: String,
    /// Its `SKILL.md`.
    pub skill_md: String,
    /// Where it was found: explicit, project, user, extra or bundled.
    pub scope: String,
    /// How hosts expose it: pinned, auto, name-only, manual or off.
    pub mode: String,
    /// True when the model may activate it.
    pub model_invocable: bool,
    /// True when the user may invoke it.
    pub user_invocable: bool,
    /// The frontmatter's `argument-hint`.
    pub argument_hint: Option<String>,
}

impl From<&skilldeck::Skill> for Skill {
    fn from(s: &skilldeck::Skill) -> Self {
        Skill {
            name: s.name.clone(),
            description: s.description.clone(),
            path: s.dir().to_string_lossy().into_owned(),
            skill_md: s.skill_md.to_string_lossy().into_owned(),
            scope: s.scope.as_str().to_owned(),
            mode: s.mode.as_str().to_owned(),
            model_invocable: skilldeck_host::is_model_invocable(s),
            user_invocable: skilldeck_host::is_user_invocable(s),
            argument_hint: s.argument_hint().map(str::to_owned),
        }
    }
}

/// What activating a skill answered.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Activation {
    /// The skill's name.
    pub name: String,
    /// The text for the model: the instructions (in the requested
    /// rendering, `xml` by default) or the short "already active" notice.
    pub text: String,
    /// True when the conversation already had the instructions (`text` is
    /// the notice; `body` is absent).
    pub already_active: bool,
    /// The body: frontmatter removed, arguments substituted.
    pub body: Option<String>,
    /// The skill folder (relative paths in the body are relative to it).
    pub skill_dir: Option<String>,
    /// The skill's files (without `SKILL.md`), sorted, as far as the
    /// listing limit goes.
    pub resources: Vec<String>,
}

impl Activation {
    /// The instructions of `activation`, with `text` as rendered.
    pub(crate) fn content(name: String, activation: &skilldeck::Activation, text: String) -> Self {
        Activation {
            name,
            text,
            already_active: false,
            body: Some(activation.body.clone()),
            skill_dir: Some(activation.skill_dir.to_string_lossy().into_owned()),
            resources: activation
                .resources
                .iter()
                .map(|r| r.path.clone())
                .collect(),
        }
    }

    /// The "already active" notice.
    pub(crate) fn notice(name: String, notice: String) -> Self {
        Activation {
            name,
            text: notice,
            already_active: true,
            body: None,
            skill_dir: None,
            resources: Vec::new(),
        }
    }
}

/// A file of a skill.
#[napi(object)]
pub struct Resource {
    /// The skill.
    pub skill: String,
    /// The path relative to the skill folder, normalised.
    pub path: String,
    /// Its MIME type, from the extension.
    pub mime: String,
    /// Its size in bytes.
    pub size: f64,
    /// True when it is UTF-8 text without NUL bytes.
    pub is_text: bool,
    /// The text, for a text file.
    pub text: Option<String>,
    /// The bytes, for any other file.
    pub data: Option<napi::bindgen_prelude::Buffer>,
}

impl Resource {
    pub(crate) fn new(skill: String, r: skilldeck::Resource) -> Self {
        let (text, data) = match r.content {
            skilldeck::ResourceContent::Text(t) => (Some(t), None),
            skilldeck::ResourceContent::Binary(b) => (None, Some(b.into())),
        };
        Resource {
            skill,
            path: r.path,
            mime: r.mime.to_owned(),
            size: number(r.size),
            is_text: text.is_some(),
            text,
            data,
        }
    }
}

/// A search result.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// The skill.
    pub name: String,
    /// Its description.
    pub description: String,
    /// BM25 score (higher is better).
    pub score: f64,
    /// Where it was found.
    pub scope: String,
    /// True when the model may activate it.
    pub model_invocable: bool,
}

/// The activation cache's counters and sizes.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct CacheStats {
    /// Activations answered from the cache.
    pub hits: f64,
    /// Activations read from disk.
    pub misses: f64,
    /// Entries read again because `SKILL.md` changed.
    pub reloads: f64,
    /// Entries dropped to stay within the budget.
    pub evictions: f64,
    /// Entries now.
    pub entries: f64,
    /// Bytes now.
    pub bytes: f64,
    /// hits / (hits + misses).
    pub hit_rate: f64,
}

impl From<skilldeck_host::CacheStats> for CacheStats {
    fn from(s: skilldeck_host::CacheStats) -> Self {
        CacheStats {
            hits: number(s.hits),
            misses: number(s.misses),
            reloads: number(s.reloads),
            evictions: number(s.evictions),
            entries: number(u64::try_from(s.entries).unwrap_or(u64::MAX)),
            bytes: number(u64::try_from(s.bytes).unwrap_or(u64::MAX)),
            hit_rate: s.hit_rate,
        }
    }
}

/// What a reload found.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct Reload {
    /// True when the catalog changed and the new deck replaced the old.
    pub catalog_changed: bool,
    /// The generation now current.
    pub generation: f64,
    /// Skills in the deck discovered.
    pub skills: u32,
    /// Errors that kept skill folders out of the deck.
    pub errors: Vec<Diagnostic>,
}

impl From<skilldeck_host::Reload> for Reload {
    fn from(r: skilldeck_host::Reload) -> Self {
        Reload {
            catalog_changed: r.catalog_changed,
            generation: number(r.generation),
            skills: u32::try_from(r.skills).unwrap_or(u32::MAX),
            errors: r.errors.iter().map(Diagnostic::from).collect(),
        }
    }
}

/// One of the host's agent tools, as data.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Its name (`activate_skill`, `read_skill_resource`, `search_skills`).
    pub name: String,
    /// A title for people.
    pub title: String,
    /// What the model reads (the catalog, for `activate_skill`).
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// True when it changes nothing.
    pub read_only: bool,
}

/// A tool a skill declares (`tools:` in its frontmatter), as data.
#[napi(object)]
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
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// The script it runs (relative to the skill folder); absent when the
    /// host implements it (the application registers a handler).
    pub run: Option<String>,
    /// True when the skill names no script: a handler registered with
    /// `deck.registerToolHandler` answers it.
    pub host_implemented: bool,
}

impl From<skilldeck_host::ResolvedTool<'_>> for SkillToolInfo {
    fn from(t: skilldeck_host::ResolvedTool<'_>) -> Self {
        SkillToolInfo {
            full_name: t.full_name.to_owned(),
            skill: t.skill.name.clone(),
            name: t.tool.name.to_string(),
            description: t.tool.description.clone(),
            input_schema: t.tool.input_schema.clone(),
            run: t.tool.run.clone(),
            host_implemented: t.tool.is_host_implemented(),
        }
    }
}

/// A successful run (exit code 0) or a host-implemented tool's answer.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The skill whose file ran.
    pub skill: String,
    /// The tool's full name (`{skill}__{tool}`), or `run_skill_script`.
    pub tool: String,
    /// The file that ran, relative to the skill folder (empty for a handler).
    pub path: String,
    /// The exit code.
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
    pub duration_ms: f64,
    /// What the model would read.
    pub text: String,
    /// The structured result (stdout parsed as JSON: an object, other values
    /// as `{result: value}`), when there is one.
    pub structured: Option<Value>,
}

impl From<skilldeck_host::ToolRun> for RunResult {
    fn from(run: skilldeck_host::ToolRun) -> Self {
        let o = &run.outcome;
        RunResult {
            exit_code: o.exit_code,
            signal: o.signal,
            timed_out: o.timed_out,
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            stdout_truncated: o.stdout_truncated,
            stderr_truncated: o.stderr_truncated,
            duration_ms: number(u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX)),
            structured: run.structured.clone(),
            skill: run.skill,
            tool: run.tool,
            path: run.path,
            text: run.text,
        }
    }
}

/// What a host-implemented tool's handler sees of its call (its second
/// argument).
#[napi(object)]
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The skill that declares the tool.
    pub skill: String,
    /// The tool's full name (`{skill}__{tool}`).
    pub full_name: String,
    /// The caller's trace id (`traceId` of the call), when given.
    pub trace_id: Option<String>,
    /// The conversation the call came from, when given.
    pub conversation: Option<String>,
}

/// The answer of `deck.callHostTool`: the text for the model, and for a
/// host-implemented skill tool its structured result.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct HostToolAnswer {
    /// The text for the model.
    pub text: String,
    /// The structured result of a host-implemented skill tool.
    pub structured: Option<Value>,
}
