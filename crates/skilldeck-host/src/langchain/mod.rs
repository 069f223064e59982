//! LangChain tool packages (seed 004's `skill_type: langchain_tool`), run
//! only inside the sandbox.
//!
//! A package is a Python module tree implementing LangChain tools. skilldeck
//! never imports it into its own process: a small worker ([`WORKER_SOURCE`],
//! shipped in the binary) runs as `python3 -I -B -c WORKER` in the same
//! sandbox, under the same `[exec]` policy and grants as a skill's scripts,
//! with the package folder mounted read-only. It speaks one JSON line each
//! way:
//!
//! - `describe`: imports the package and reports every tool (a `BaseTool`
//!   instance, a `@tool` function, or a `BaseTool` subclass that builds
//!   without arguments) with its name, description and the JSON Schema of
//!   its arguments (`tool_call_schema`: the pydantic model's schema). The
//!   answer is cached by the package's content fingerprint and the
//!   interpreter ([`PackageTools::describe`]);
//! - `invoke`: imports the tool's module and invokes the tool with the
//!   arguments object (already checked against the schema by the host).
//!
//! Each reported tool becomes a [`SkillTool`] with [`ToolCall::LangChain`]:
//! the same full name rule (`{skill}__{tool}`), argument validation, limits,
//! grants, approvals and exposure as a script tool, through
//! [`crate::SkillTools`] and [`crate::execution::Execution`], so every face
//! (MCP, CLI `call`, Python, Node) offers them without a rule of its own.
//!
//! The interpreter is `[exec] python` (or the skill's `[exec.skills.<name>]
//! python`), else `python3` on the sandbox's `PATH`; a virtual
//! environment's folder (and its base interpreter's, from `pyvenv.cfg`) is
//! added to the run's read-only paths ([`Interpreter::for_skill`]).

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;
use serde_json::{Value, json};
use skilldeck::deck::ExecConfig;
use skilldeck::limits::{MAX_SKILL_TOOLS, MAX_TOOL_FULL_NAME_CHARS};
use skilldeck::{Code, Diagnostic, Severity, Skill, SkillTool, ToolCall, ToolName};
use skilldeck_exec::{
    CallContext, ExecError, Executor, Input, Outcome, Policy, Request, executor_config,
    on_sandbox_path, policy_from_config,
};

/// The worker's source, run with `python3 -I -B -c`.
pub const WORKER_SOURCE: &str = include_str!("worker.py");

/// The worker protocol version this host speaks (the reply's `protocol`).
pub const WORKER_PROTOCOL: u64 = 1;

/// Packages whose description is remembered (by fingerprint).
pub const DESCRIBE_CACHE_ENTRIES: usize = 1_024;

/// The agent id describe runs are made under (the concurrency cap counts
/// them together).
pub const DESCRIBE_AGENT: &str = "skilldeck-describe";

/// Folders a virtual environment's base interpreter may live in that the
/// sandbox already shows (read-only system folders).
const SYSTEM_PREFIXES: &[&str] = &["/usr", "/bin", "/lib", "/lib64"];

/// The Python that runs a package's worker, and the folders it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The interpreter, absolute.
    pub program: PathBuf,
    /// Folders added to the run's read-only paths: a virtual environment,
    /// and its base interpreter's prefix when outside the system folders.
    pub read_paths: Vec<PathBuf>,
}

impl Interpreter {
    /// The interpreter of skill `skill` under `config`: its grant's
    /// `python`, `[exec] python`, else `python3` on the sandbox's `PATH`.
    pub fn for_skill(config: &ExecConfig, skill: &str) -> Result<Interpreter, String> {
        let Some(configured) = config.python_for(skill) else {
            let program = on_sandbox_path("python3").ok_or_else(|| {
                format!(
                    "no python3 in the sandbox's PATH ({}); install Python 3, or set [exec] python to an interpreter with langchain-core",
                    skilldeck_exec::SANDBOX_PATH
                )
            })?;
            return Ok(Interpreter {
                program,
                read_paths: Vec::new(),
            });
        };
        if !configured.is_absolute() {
            return Err(format!(
                "[exec] python '{}' is not an absolute path (relative paths are resolved against the config file's folder)",
                configured.display()
            ));
        }
        let executable = std::fs::metadata(configured).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        if !executable {
            return Err(format!(
                "[exec] python '{}' is not an executable file; point it at a Python 3 interpreter (a virtual environment's bin/python3)",
                configured.display()
            ));
        }
        let mut read_paths = Vec::new();
        let venv = configured
            .parent()
            .and_then(Path::parent)
            .filter(|root| root.join("pyvenv.cfg").is_file());
        if let Some(venv) = venv {
            read_paths.push(venv.to_path_buf());
            if let Some(home) = pyvenv_home(&venv.join("pyvenv.cfg"))
                && let Some(prefix) = home.parent()
                && !is_system(prefix)
            {
                read_paths.push(prefix.to_path_buf());
            }
        } else if let Some(prefix) = configured.parent().and_then(Path::parent)
            && !is_system(prefix)
        {
            read_paths.push(prefix.to_path_buf());
        }
        if let Ok(real) = std::fs::canonicalize(configured)
            && let Some(prefix) = real.parent().and_then(Path::parent)
            && !is_system(prefix)
            && !read_paths.iter().any(|p| real.starts_with(p))
        {
            read_paths.push(prefix.to_path_buf());
        }
        read_paths.retain(|p| p.is_dir());
        read_paths.dedup();
        Ok(Interpreter {
            program: configured.to_path_buf(),
            read_paths,
        })
    }

    /// The interpreter a run of skill `skill` uses: the operator's
    /// ([`Interpreter::for_skill`]) when configured, else the skill's
    /// environment when it declares dependencies
    /// ([`crate::environment::for_skill`]: refused, naming the failing
    /// requirement, when it is not built), else `python3` on the sandbox's
    /// `PATH`.
    pub fn for_run(config: &ExecConfig, skill: &Skill) -> Result<Interpreter, String> {
        match crate::environment::for_skill(config, skill) {
            Ok(envs) => match envs.iter().find_map(|e| Some((e.python.clone()?, e))) {
                Some((program, env)) => Ok(Interpreter {
                    program,
                    read_paths: env.read_paths.clone(),
                }),
                None => Interpreter::for_skill(config, &skill.name),
            },
            Err(problem) => Err(crate::environment::describe(&problem)),
        }
    }

    /// The worker's command line after the program.
    pub fn worker_args() -> Vec<String> {
        vec![
            "-I".to_owned(),
            "-B".to_owned(),
            "-c".to_owned(),
            WORKER_SOURCE.to_owned(),
        ]
    }

    /// `policy` with this interpreter's folders readable.
    pub fn apply(&self, mut policy: Policy) -> Policy {
        for path in &self.read_paths {
            if !policy.grants.read_paths.contains(path) {
                policy.grants.read_paths.push(path.clone());
            }
        }
        policy
    }
}

fn is_system(path: &Path) -> bool {
    SYSTEM_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// `home = ...` of a `pyvenv.cfg` (the base interpreter's folder).
fn pyvenv_home(cfg: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(cfg).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })
}

/// What describing a package found: its tools, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Described {
    /// The package's tools, each valid ([`ToolCall::LangChain`]).
    pub tools: Vec<SkillTool>,
    /// Why the package or one of its tools is not offered
    /// ([`Code::ToolPackageFailed`] warnings in its `SKILL.md`).
    pub problems: Vec<Diagnostic>,
}

/// Describes LangChain tool packages in the sandbox, caching each answer by
/// the package's content fingerprint and interpreter.
pub struct PackageTools {
    config: ExecConfig,
    executor: Executor,
    cache: Mutex<LruCache<String, Arc<Described>>>,
}

impl std::fmt::Debug for PackageTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackageTools")
            .field("cached", &self.lock().len())
            .finish_non_exhaustive()
    }
}

impl PackageTools {
    /// The configuration it describes under.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    /// A describer under `config`'s policy (its limits, grants and
    /// interpreters; relative paths already resolved).
    pub fn new(config: ExecConfig) -> Self {
        let executor = Executor::new(executor_config(&config));
        PackageTools::with_executor(config, executor)
    }

    /// [`PackageTools::new`] running through `executor`.
    pub fn with_executor(config: ExecConfig, executor: Executor) -> Self {
        let capacity = NonZeroUsize::new(DESCRIBE_CACHE_ENTRIES).unwrap_or(NonZeroUsize::MIN);
        PackageTools {
            config,
            executor,
            cache: Mutex::new(LruCache::new(capacity)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<String, Arc<Described>>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Packages described and remembered now.
    pub fn cached(&self) -> usize {
        self.lock().len()
    }

    /// The tools of the LangChain package `skill`: from the cache when its
    /// files and interpreter are unchanged, else found by the worker in the
    /// sandbox. A failure is a [`Described`] with no tools and the reason
    /// (failures of the interpreter, which the operator may fix without
    /// touching the package, are not remembered).
    pub fn describe(&self, skill: &Skill) -> Arc<Described> {
        let fail = |message: String, help: &str| {
            Arc::new(Described {
                tools: Vec::new(),
                problems: vec![problem(skill, message, help)],
            })
        };
        let interpreter = match Interpreter::for_run(&self.config, skill) {
            Ok(i) => i,
            Err(message) => {
                return fail(
                    format!(
                        "LangChain package '{}' is not offered: {message}",
                        skill.name
                    ),
                    "see docs/execution.md, LangChain tool packages",
                );
            }
        };
        let key = match fingerprint(skill, &interpreter) {
            Ok(key) => key,
            Err(message) => {
                return fail(
                    format!(
                        "LangChain package '{}' is not offered: its files cannot be read: {message}",
                        skill.name
                    ),
                    "check the package folder's permissions",
                );
            }
        };
        if let Some(hit) = self.lock().get(&key) {
            return Arc::clone(hit);
        }
        let (described, remember) = self.run_describe(skill, &interpreter);
        let described = Arc::new(described);
        if remember {
            self.lock().put(key, Arc::clone(&described));
        }
        described
    }

    fn run_describe(&self, skill: &Skill, interpreter: &Interpreter) -> (Described, bool) {
        let failed = |message: String, help: &str, remember: bool| {
            (
                Described {
                    tools: Vec::new(),
                    problems: vec![problem(skill, message, help)],
                },
                remember,
            )
        };
        let policy = match policy_from_config(&self.config, &skill.name) {
            Ok(p) => interpreter.apply(p),
            Err(e) => {
                return failed(
                    format!("LangChain package '{}' was not described: {e}", skill.name),
                    "fix the sandbox (skilldeck sandbox says what is missing)",
                    false,
                );
            }
        };
        let request = Request {
            skill,
            path: "SKILL.md",
            args: Vec::new(),
            stdin: Input::Bytes(b"{\"op\":\"describe\"}\n".to_vec()),
            context: CallContext {
                agent_id: DESCRIBE_AGENT.to_owned(),
                tool: format!("langchain-describe:{}", skill.name),
                ..CallContext::default()
            },
        };
        let outcome = match self.executor.run_program(
            request,
            &interpreter.program,
            Interpreter::worker_args(),
            &policy,
        ) {
            Ok(o) => o,
            Err(e) => {
                return failed(
                    format!("LangChain package '{}' was not described: {e}", skill.name),
                    "fix the sandbox or the interpreter ([exec] python)",
                    false,
                );
            }
        };
        let reply = match reply_of(&outcome) {
            Ok(reply) => reply,
            Err(message) => {
                return failed(
                    format!(
                        "LangChain package '{}' was not described: {message}",
                        skill.name
                    ),
                    "run `skilldeck call` on one of its tools to see the worker's output",
                    !outcome.timed_out,
                );
            }
        };
        if reply.get("ok") != Some(&Value::Bool(true)) {
            let kind = reply
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("package");
            let error = reply.get("error").and_then(Value::as_str).unwrap_or("");
            let help = if kind == "environment" {
                "install langchain-core for the sandbox's interpreter, or set [exec] python to a virtual environment's bin/python3 that has it"
            } else {
                "fix the package's import error (the message is the end of its traceback)"
            };
            return failed(
                format!(
                    "LangChain package '{}' could not be imported in the sandbox: {error}",
                    skill.name
                ),
                help,
                kind != "environment",
            );
        }
        (tools_of_reply(skill, &reply), true)
    }
}

/// sha256 over the worker, the interpreter and every file of the skill
/// (path and digest).
fn fingerprint(skill: &Skill, interpreter: &Interpreter) -> Result<String, String> {
    let files = skilldeck::list_resources(skill).map_err(|e| e.to_string())?;
    let mut text = String::new();
    text.push_str(&skilldeck::sha256_digest(WORKER_SOURCE.as_bytes()));
    text.push('\n');
    text.push_str(&interpreter.program.to_string_lossy());
    text.push('\n');
    text.push_str(&skill.real_dir().to_string_lossy());
    text.push('\n');
    for file in &files.files {
        let resource = skilldeck::read_resource(skill, &file.path).map_err(|e| e.to_string())?;
        text.push_str(&file.path);
        text.push(' ');
        text.push_str(&skilldeck::sha256_digest(resource.bytes()));
        text.push('\n');
    }
    Ok(skilldeck::sha256_digest(text.as_bytes()))
}

fn problem(skill: &Skill, message: String, help: &str) -> Diagnostic {
    Diagnostic::new(Code::ToolPackageFailed, Severity::Warning, message)
        .in_file(&skill.skill_md)
        .with_help(help)
}

/// The worker's reply line (the last line of stdout that is a JSON
/// object), or why there is none.
pub(crate) fn reply_of(outcome: &Outcome) -> Result<Value, String> {
    if outcome.timed_out {
        return Err(format!(
            "the worker timed out after {} s",
            outcome.policy.limits.timeout.as_secs_f64()
        ));
    }
    let stdout = String::from_utf8_lossy(&outcome.stdout);
    let reply = stdout.lines().rev().find_map(|line| {
        serde_json::from_str::<Value>(line)
            .ok()
            .filter(Value::is_object)
    });
    match reply {
        Some(reply) if reply.get("protocol").and_then(Value::as_u64) == Some(WORKER_PROTOCOL) => {
            Ok(reply)
        }
        Some(_) => Err("the worker's reply speaks another protocol".to_owned()),
        None => {
            let stderr = String::from_utf8_lossy(&outcome.stderr);
            let last: Vec<&str> = stderr.trim_end().lines().rev().take(6).collect();
            let tail: Vec<&str> = last.into_iter().rev().collect();
            Err(format!(
                "the worker ended ({}) without a reply{}",
                outcome.label(),
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", tail.join("\n"))
                }
            ))
        }
    }
}

/// The tool name a LangChain name becomes: lowercase, every other
/// character `_`, a leading `t_` when it does not start with a letter.
pub fn skill_tool_name(langchain_name: &str) -> Option<ToolName> {
    let mut name: String = langchain_name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "t_");
    }
    ToolName::new(&name).ok()
}

fn tools_of_reply(skill: &Skill, reply: &Value) -> Described {
    let mut described = Described::default();
    let tell = |described: &mut Described, message: String| {
        described.problems.push(problem(
            skill,
            message,
            "fix the tool in the package; the rest of its tools are offered",
        ));
    };
    for skipped in reply
        .get("skipped")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let module = skipped.get("module").and_then(Value::as_str).unwrap_or("?");
        let error = skipped.get("error").and_then(Value::as_str).unwrap_or("");
        tell(
            &mut described,
            format!(
                "LangChain package '{}': {module} was left out: {error}",
                skill.name
            ),
        );
    }
    let tools = reply
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if tools.is_empty() && described.problems.is_empty() {
        tell(
            &mut described,
            format!(
                "LangChain package '{}' defines no tool (no BaseTool instance, @tool function or BaseTool subclass in its top-level modules)",
                skill.name
            ),
        );
    }
    for tool in tools {
        if described.tools.len() >= MAX_SKILL_TOOLS {
            tell(
                &mut described,
                format!(
                    "LangChain package '{}' has more than {MAX_SKILL_TOOLS} tools; the rest are left out",
                    skill.name
                ),
            );
            break;
        }
        let lc_name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let module = tool.get("module").and_then(Value::as_str).unwrap_or("");
        let Some(name) = skill_tool_name(lc_name) else {
            tell(
                &mut described,
                format!("LangChain tool '{lc_name}' has no usable name"),
            );
            continue;
        };
        let full = name_full(skill, &name);
        if full.chars().count() > MAX_TOOL_FULL_NAME_CHARS {
            tell(
                &mut described,
                format!(
                    "LangChain tool '{lc_name}': the full name '{full}' is over {MAX_TOOL_FULL_NAME_CHARS} characters"
                ),
            );
            continue;
        }
        if described.tools.iter().any(|t| t.name == name) {
            tell(
                &mut described,
                format!(
                    "LangChain tool '{lc_name}': another tool of the package is also named '{name}'"
                ),
            );
            continue;
        }
        if skilldeck::resources::read_resource(skill, module).is_err() {
            tell(
                &mut described,
                format!(
                    "LangChain tool '{lc_name}': its module '{module}' is not a file of the package"
                ),
            );
            continue;
        }
        let schema = tool.get("schema").cloned().unwrap_or(Value::Null);
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            tell(
                &mut described,
                format!(
                    "LangChain tool '{lc_name}': its argument schema is not a JSON Schema object"
                ),
            );
            continue;
        }
        if let Err(e) = jsonschema::validator_for(&schema) {
            tell(
                &mut described,
                format!("LangChain tool '{lc_name}': its argument schema does not compile: {e}"),
            );
            continue;
        }
        let description = tool
            .get("description")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map_or_else(
                || format!("LangChain tool '{lc_name}' of package '{}'.", skill.name),
                str::to_owned,
            );
        described.tools.push(SkillTool {
            name,
            description: description
                .chars()
                .take(skilldeck::limits::MAX_DESCRIPTION_CHARS)
                .collect(),
            input_schema: schema,
            run: Some(module.to_owned()),
            line: 0,
            call: ToolCall::LangChain {
                name: lc_name.to_owned(),
            },
        });
    }
    described
}

fn name_full(skill: &Skill, name: &ToolName) -> String {
    skilldeck::full_tool_name(&skill.name, name)
}

/// The `invoke` request of tool `langchain_name` in `module` with
/// `arguments`, as the worker reads it on stdin.
pub fn invoke_request(module: &str, langchain_name: &str, arguments: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "op": "invoke",
        "module": module,
        "tool": langchain_name,
        "arguments": arguments,
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// `outcome` of an `invoke` run as a script's: the result on stdout (a
/// string as is, anything else as JSON) and exit code 0; the tool's error
/// on stderr and exit code 1. A run that ended without a reply (timeout,
/// signal, crash) is left as it ended.
pub fn invoke_outcome(mut outcome: Outcome) -> Outcome {
    if outcome.timed_out || outcome.exit_code != Some(0) {
        return outcome;
    }
    match reply_of(&outcome) {
        Ok(reply) if reply.get("ok") == Some(&Value::Bool(true)) => {
            let result = reply.get("result").cloned().unwrap_or(Value::Null);
            let mut stdout = match result {
                Value::String(s) => s.into_bytes(),
                other => other.to_string().into_bytes(),
            };
            // A line, as a script's `print` ends it.
            if !stdout.ends_with(b"\n") {
                stdout.push(b'\n');
            }
            outcome.stdout = stdout;
            outcome.stdout_truncated = false;
        }
        Ok(reply) => {
            let kind = reply.get("kind").and_then(Value::as_str).unwrap_or("tool");
            let error = reply.get("error").and_then(Value::as_str).unwrap_or("");
            let mut stderr = outcome.stderr.clone();
            if !stderr.is_empty() && !stderr.ends_with(b"\n") {
                stderr.push(b'\n');
            }
            stderr.extend_from_slice(format!("LangChain tool error ({kind}): {error}").as_bytes());
            outcome.stderr = stderr;
            outcome.stdout.clear();
            outcome.exit_code = Some(1);
        }
        Err(message) => {
            let mut stderr = outcome.stderr.clone();
            if !stderr.is_empty() && !stderr.ends_with(b"\n") {
                stderr.push(b'\n');
            }
            stderr.extend_from_slice(message.as_bytes());
            outcome.stderr = stderr;
            outcome.exit_code = Some(1);
        }
    }
    outcome
}

/// Runs the worker for a prepared `invoke`: `request.stdin` holds the
/// [`invoke_request`]; the interpreter is skill `request.skill`'s.
pub(crate) fn run_invoke(
    executor: &Executor,
    config: &ExecConfig,
    request: Request<'_>,
    policy: Policy,
) -> Result<Outcome, ExecError> {
    let interpreter =
        Interpreter::for_run(config, request.skill).map_err(ExecError::InvalidInput)?;
    let policy = interpreter.apply(policy);
    executor
        .run_program(
            request,
            &interpreter.program,
            Interpreter::worker_args(),
            &policy,
        )
        .map(invoke_outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn langchain_names_become_tool_names() {
        let name = |n: &str| skill_tool_name(n).map(|t| t.to_string());
        assert_eq!(name("get_weather").as_deref(), Some("get_weather"));
        assert_eq!(name("Weather Tool").as_deref(), Some("weather_tool"));
        assert_eq!(name("2fast").as_deref(), Some("t_2fast"));
        assert_eq!(name("").as_deref(), Some("t_"));
    }

    fn package() -> (skilldeck_testkit::Root, skilldeck::Deck) {
        let root = skilldeck_testkit::Root::new();
        root.skill("pkg")
            .description("A package. Use when testing.")
            .frontmatter_raw("skill_type: langchain_tool\n")
            .file("tools.py", "")
            .write();
        let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([root
            .path()
            .to_path_buf()]));
        (root, deck)
    }

    #[test]
    fn a_reported_tool_without_an_object_schema_or_outside_the_package_is_left_out() {
        let (_root, deck) = package();
        let skill = deck.get("pkg").expect("loaded");
        let object = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let reply = json!({"ok": true, "protocol": 1, "skipped": [], "tools": [
            {"name": "Search Notes", "description": "Search.", "schema": object, "module": "tools.py"},
            {"name": "search_notes", "description": "Again.", "schema": object, "module": "tools.py"},
            {"name": "flat", "description": "", "schema": {"type": "string"}, "module": "tools.py"},
            {"name": "away", "description": "", "schema": object, "module": "../../etc/passwd"},
            {"name": "bad", "description": "", "schema": {"type": "object", "minimum": "x"}, "module": "tools.py"},
        ]});
        let described = tools_of_reply(skill, &reply);
        let names: Vec<&str> = described.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["search_notes"]);
        assert_eq!(
            described.tools[0].call,
            ToolCall::LangChain {
                name: "Search Notes".to_owned()
            }
        );
        assert_eq!(described.problems.len(), 4, "{:#?}", described.problems);
        assert!(
            described
                .problems
                .iter()
                .all(|d| d.code == Code::ToolPackageFailed)
        );
    }

    #[test]
    fn a_package_with_no_tool_is_reported() {
        let (_root, deck) = package();
        let skill = deck.get("pkg").expect("loaded");
        let reply = json!({"ok": true, "protocol": 1, "skipped": [], "tools": []});
        let described = tools_of_reply(skill, &reply);
        assert!(described.tools.is_empty());
        assert!(described.problems[0].message.contains("defines no tool"));
    }

    #[test]
    fn a_venvs_folder_and_its_base_prefix_become_readable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().join("base");
        std::fs::create_dir_all(base.join("bin")).expect("mkdir");
        let venv = dir.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).expect("mkdir");
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!("home = {}\n", base.join("bin").display()),
        )
        .expect("write");
        let python = venv.join("bin/python3");
        std::fs::write(&python, "#!/bin/sh\n").expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let config = ExecConfig {
            python: Some(python.clone()),
            ..ExecConfig::default()
        };
        let interpreter = Interpreter::for_skill(&config, "any").expect("interpreter");
        assert_eq!(interpreter.program, python);
        assert_eq!(interpreter.read_paths, vec![venv, base]);
        let missing = ExecConfig {
            python: Some(dir.path().join("nope/bin/python3")),
            ..ExecConfig::default()
        };
        let err = Interpreter::for_skill(&missing, "any").expect_err("missing");
        assert!(err.contains("not an executable file"), "{err}");
    }
}
