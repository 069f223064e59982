//! Skill-defined tools (`tools:` in a skill's frontmatter) as a host sees
//! them: listed under their full names `{skill}__{tool}`, resolved back to
//! (skill, tool), and their arguments checked against the tool's JSON
//! Schema before anything runs.
//!
//! A [`SkillTools`] index is built once per [`crate::Snapshot`] (see
//! [`crate::Snapshot::skill_tools`]); each tool's schema is compiled on its
//! first call and kept for the snapshot's life. Running a tool is the
//! execution layer's work: this module only says which script of which
//! skill a name means, and whether the arguments may be given to it.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use skilldeck::{Deck, Skill, SkillTool};

use crate::error::Error;
use crate::langchain::PackageTools;
use crate::rules;

/// Largest argument value accepted (bytes of its JSON text): the core's
/// [`skilldeck::limits::MAX_TOOL_ARGUMENT_BYTES`].
pub const MAX_TOOL_ARGUMENT_BYTES: usize = skilldeck::limits::MAX_TOOL_ARGUMENT_BYTES;

/// Longest reason kept from a schema error (characters): the instance it
/// quotes may be large.
pub const MAX_ARGUMENT_REASON_CHARS: usize = 300;

/// One declared tool in a [`SkillTools`] index.
#[derive(Debug)]
pub struct SkillToolEntry {
    /// `{skill}__{tool}` (the skill's hyphens as underscores).
    pub full_name: String,
    /// The skill's name.
    pub skill: String,
    /// The tool's position in the skill's [`Skill::tools`] (unused when
    /// `found` holds the tool).
    index: usize,
    /// A tool found in a LangChain package by the sandboxed worker (not
    /// declared in the skill's frontmatter).
    found: Option<SkillTool>,
    /// The compiled schema, on first use.
    validator: OnceLock<Result<Arc<jsonschema::Validator>, String>>,
}

/// A full name resolved to its skill and tool.
#[derive(Debug, Clone, Copy)]
pub struct ResolvedTool<'d> {
    /// The full name.
    pub full_name: &'d str,
    /// The skill that declares it (served).
    pub skill: &'d Skill,
    /// The tool.
    pub tool: &'d SkillTool,
}

impl ResolvedTool<'_> {
    /// The entry point, resolved and checked again now: inside the skill
    /// folder (symlinks resolved) and a regular file. The execution layer
    /// runs this path, never `run` joined by hand.
    pub fn script_path(&self) -> Result<PathBuf, Error> {
        let run = self.tool.run.as_deref().unwrap_or_default();
        let refuse = |problem| {
            Error::Core(skilldeck::Error::Resource {
                skill: self.skill.name.clone(),
                path: run.to_owned(),
                problem,
            })
        };
        if self.tool.is_host_implemented() {
            return Err(refuse(skilldeck::ResourceProblem::NotFound));
        }
        let root = std::fs::canonicalize(self.skill.real_dir())
            .map_err(|_| refuse(skilldeck::ResourceProblem::NotFound))?;
        let path = std::fs::canonicalize(root.join(run))
            .map_err(|_| refuse(skilldeck::ResourceProblem::NotFound))?;
        if !path.starts_with(&root) {
            return Err(refuse(skilldeck::ResourceProblem::Escapes));
        }
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err(refuse(skilldeck::ResourceProblem::NotFound));
        }
        Ok(path)
    }
}

/// Every declared tool of a deck by full name, with its compiled schema
/// cached. Built once per snapshot.
#[derive(Debug, Default)]
pub struct SkillTools {
    entries: Vec<SkillToolEntry>,
    by_name: HashMap<String, usize>,
    /// Why LangChain packages (or some of their tools) are not offered.
    problems: Vec<skilldeck::Diagnostic>,
    /// Skills whose environment cannot be used, with why: their tools are
    /// not offered, and a call is refused saying why.
    blocked: HashMap<String, String>,
}

impl SkillTools {
    /// The index of every tool `deck` declares (served skills or not, so
    /// a call to a tool of an ineligible skill can say why it is refused):
    /// `tools:` entries and entry points. LangChain packages' tools need
    /// [`SkillTools::build_with`].
    pub fn build(deck: &Deck) -> Self {
        SkillTools::build_with(deck, None)
    }

    /// [`SkillTools::build`], plus the tools of every served LangChain
    /// package (`skill_type: langchain_tool`) as `packages` describes them
    /// in the sandbox (cached by fingerprint). Without `packages` (skill
    /// code does not run here) a package offers nothing.
    pub fn build_with(deck: &Deck, packages: Option<&PackageTools>) -> Self {
        let mut entries = Vec::new();
        let mut by_name = HashMap::new();
        let mut problems = Vec::new();
        let mut blocked = HashMap::new();
        for skill in deck.skills() {
            let has_tools = !skill.tools().is_empty()
                || skill.skill_type() == Some(skilldeck::SkillType::LangchainTool);
            let mut env_ok = true;
            if let Some(packages) = packages
                && has_tools
                && rules::is_served(skill)
                && let Err(problem) = crate::environment::for_skill(packages.config(), skill)
            {
                problems.extend(problem.to_diagnostics(&skill.skill_md));
                blocked.insert(skill.name.clone(), crate::environment::describe(&problem));
                env_ok = false;
            }
            for (index, tool) in skill.tools().iter().enumerate() {
                let full_name = tool.full_name(&skill.name);
                by_name.insert(full_name.clone(), entries.len());
                entries.push(SkillToolEntry {
                    full_name,
                    skill: skill.name.clone(),
                    index,
                    found: None,
                    validator: OnceLock::new(),
                });
            }
            let Some(packages) = packages else {
                continue;
            };
            if !env_ok
                || skill.skill_type() != Some(skilldeck::SkillType::LangchainTool)
                || !rules::is_served(skill)
            {
                continue;
            }
            let described = packages.describe(skill);
            problems.extend(described.problems.iter().cloned());
            for tool in &described.tools {
                let full_name = tool.full_name(&skill.name);
                if by_name.contains_key(&full_name) {
                    problems.push(
                        skilldeck::Diagnostic::new(
                            skilldeck::Code::ToolPackageFailed,
                            skilldeck::Severity::Warning,
                            format!(
                                "LangChain tool '{full_name}' is left out: the skill already declares a tool of that name"
                            ),
                        )
                        .in_file(&skill.skill_md),
                    );
                    continue;
                }
                by_name.insert(full_name.clone(), entries.len());
                entries.push(SkillToolEntry {
                    full_name,
                    skill: skill.name.clone(),
                    index: 0,
                    found: Some(tool.clone()),
                    validator: OnceLock::new(),
                });
            }
        }
        SkillTools {
            entries,
            by_name,
            problems,
            blocked,
        }
    }

    /// Why LangChain packages (or some of their tools) are not offered, each
    /// a [`skilldeck::Code::ToolPackageFailed`] warning in its `SKILL.md`.
    pub fn problems(&self) -> &[skilldeck::Diagnostic] {
        &self.problems
    }

    /// The tools of served skills, in deck order: what a host may offer
    /// (a skill whose environment cannot be used offers none).
    pub fn served<'d>(&'d self, deck: &'d Deck) -> impl Iterator<Item = ResolvedTool<'d>> {
        self.entries.iter().filter_map(|e| {
            self.resolve_entry(deck, e)
                .filter(|r| rules::is_served(r.skill) && !self.blocked.contains_key(&r.skill.name))
        })
    }

    /// Why skill `name`'s tools are not offered although it is served: its
    /// environment cannot be used (`None`: they are, or it has none).
    pub fn environment_problem(&self, name: &str) -> Option<&str> {
        self.blocked.get(name).map(String::as_str)
    }

    /// The tools of the skills the model may use
    /// ([`rules::model_access`]), in deck order: what a host lists to a
    /// model. A tool of a user-invoked-only skill is never listed.
    pub fn model_usable<'d>(&'d self, deck: &'d Deck) -> impl Iterator<Item = ResolvedTool<'d>> {
        self.served(deck)
            .filter(|r| rules::model_access(r.skill).is_ok())
    }

    /// The tools of the served skill `name`, with their full names.
    pub fn of_skill<'d>(
        &'d self,
        deck: &'d Deck,
        name: &str,
    ) -> Result<Vec<ResolvedTool<'d>>, Error> {
        let skill = rules::require_served(deck, name)?;
        Ok(self
            .entries
            .iter()
            .filter(|e| e.skill == skill.name)
            .filter_map(|e| self.resolve_entry(deck, e))
            .collect())
    }

    /// The tool named `full_name` as declared, served or not (`None`: no
    /// skill declares it).
    pub fn declared<'d>(&'d self, deck: &'d Deck, full_name: &str) -> Option<ResolvedTool<'d>> {
        let entry = self.by_name.get(full_name).map(|&i| &self.entries[i])?;
        self.resolve_entry(deck, entry)
    }

    /// The tool named `full_name` (`{skill}__{tool}`): its skill must be
    /// served (else the core's reason: turned off, not eligible).
    pub fn resolve<'d>(
        &'d self,
        deck: &'d Deck,
        full_name: &str,
    ) -> Result<ResolvedTool<'d>, Error> {
        let entry = self
            .by_name
            .get(full_name)
            .map(|&i| &self.entries[i])
            .ok_or_else(|| Error::UnknownSkillTool {
                name: full_name.to_owned(),
                suggestions: self.suggestions(deck, full_name),
            })?;
        let resolved = self
            .resolve_entry(deck, entry)
            .ok_or_else(|| Error::UnknownSkillTool {
                name: full_name.to_owned(),
                suggestions: Vec::new(),
            })?;
        if !rules::is_served(resolved.skill) {
            return Err(Error::Core(rules::not_served(resolved.skill)));
        }
        if let Some(reason) = self.blocked.get(&resolved.skill.name) {
            return Err(Error::SkillEnvironment {
                tool: full_name.to_owned(),
                reason: reason.clone(),
            });
        }
        Ok(resolved)
    }

    /// Checks `arguments` for the tool `full_name` against its schema
    /// (compiled once, on first use). Nothing runs before this passes.
    pub fn check_arguments(
        &self,
        deck: &Deck,
        full_name: &str,
        arguments: &Value,
    ) -> Result<(), Error> {
        let resolved = self.resolve(deck, full_name)?;
        let size = json_size_capped(arguments, MAX_TOOL_ARGUMENT_BYTES);
        if size > MAX_TOOL_ARGUMENT_BYTES {
            return Err(Error::ToolArgumentsTooLarge {
                tool: full_name.to_owned(),
                limit: MAX_TOOL_ARGUMENT_BYTES,
            });
        }
        let Some(&i) = self.by_name.get(full_name) else {
            return Err(Error::UnknownSkillTool {
                name: full_name.to_owned(),
                suggestions: Vec::new(),
            });
        };
        let validator = self.entries[i]
            .validator
            .get_or_init(|| {
                jsonschema::validator_for(&resolved.tool.input_schema)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|message| Error::ToolSchema {
                tool: full_name.to_owned(),
                message: message.clone(),
            })?;
        let mut errors = validator.iter_errors(arguments);
        if let Some(first) = errors.next() {
            let path = first.instance_path().to_string();
            let reason: String = first
                .to_string()
                .chars()
                .take(MAX_ARGUMENT_REASON_CHARS)
                .collect();
            return Err(Error::InvalidToolArguments {
                tool: full_name.to_owned(),
                path: if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                },
                reason,
                more: errors.count(),
            });
        }
        Ok(())
    }

    /// Parses `text` as a tool's JSON arguments (refused past
    /// [`MAX_TOOL_ARGUMENT_BYTES`] before parsing), then checks them
    /// ([`SkillTools::check_arguments`]).
    pub fn parse_arguments(
        &self,
        deck: &Deck,
        full_name: &str,
        text: &str,
    ) -> Result<Value, Error> {
        self.resolve(deck, full_name)?;
        if text.len() > MAX_TOOL_ARGUMENT_BYTES {
            return Err(Error::ToolArgumentsTooLarge {
                tool: full_name.to_owned(),
                limit: MAX_TOOL_ARGUMENT_BYTES,
            });
        }
        let value: Value = serde_json::from_str(text).map_err(|e| Error::ToolArgumentsNotJson {
            tool: full_name.to_owned(),
            message: e.to_string(),
        })?;
        self.check_arguments(deck, full_name, &value)?;
        Ok(value)
    }

    /// Number of declared tools (served or not).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no skill declares a tool.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn resolve_entry<'d>(
        &'d self,
        deck: &'d Deck,
        e: &'d SkillToolEntry,
    ) -> Option<ResolvedTool<'d>> {
        let skill = deck.get(&e.skill)?;
        let tool = match &e.found {
            Some(tool) => tool,
            None => skill.tools().get(e.index)?,
        };
        Some(ResolvedTool {
            full_name: &e.full_name,
            skill,
            tool,
        })
    }

    /// Full names of the tools the model may use (the model-access rule)
    /// that share the requested skill part or tool part, for "did you
    /// mean": an error never names a tool of a user-invoked-only skill.
    fn suggestions(&self, deck: &Deck, full_name: &str) -> Vec<String> {
        let (skill_part, tool_part) = full_name
            .split_once(skilldeck::spec::FULL_NAME_SEPARATOR)
            .unwrap_or((full_name, full_name));
        self.model_usable(deck)
            .map(|r| r.full_name)
            .filter(|n| {
                n.split_once(skilldeck::spec::FULL_NAME_SEPARATOR)
                    .is_some_and(|(s, t)| s == skill_part || t == tool_part)
            })
            .map(str::to_owned)
            .collect()
    }
}

/// Bytes of `value`'s JSON text, counting no further than `cap + 1`.
fn json_size_capped(value: &Value, cap: usize) -> usize {
    struct Counter {
        n: usize,
        cap: usize,
    }
    impl Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.cap {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { n: 0, cap };
    // Stops at the cap: the count is then over it.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.n
}
