//! Which skills a host serves and to whom, stated once: every face (MCP,
//! CLI, bindings) asks here instead of testing modes itself.
//!
//! - **served**: the skill's mode is not `off` and it is eligible on this
//!   machine (its `requires`); such a skill stays in the deck, so it can be
//!   named in errors with the reason, but no face offers it (catalog, tool
//!   lists);
//! - **model access** ([`model_access`]): served, and the model may use it
//!   (not `disable-model-invocation`, not mode `manual`). One rule for
//!   everything the model does with a skill: activate it, run its scripts
//!   (`run_skill_script`), list and call its tools (`{skill}__{tool}`), find
//!   it in the catalog and in `search_skills`. A refusal is a typed
//!   [`ModelRefusal`] with a stable [`ModelRefusal::code`] and a message
//!   saying how the user can run the skill instead;
//! - **user-invocable**: served, and the user may invoke it (not
//!   `user-invocable: false`).
//!
//! The user's own paths (an MCP prompt, `skilldeck run`/`call`/`activate`,
//! an application's `Deck.run`/`call_tool` in Python) are not the model and
//! do not ask [`model_access`].

use skilldeck::{Deck, Skill, SkillMode};

use crate::tool_error::{ToolError, ToolErrorKind};

/// True when `skill` is served: its mode is not `off` and it is eligible (the core's
/// [`Skill::is_served`], where the rule is written).
pub fn is_served(skill: &Skill) -> bool {
    skill.is_served()
}

/// True when the model may use `skill`: [`model_access`] allows it.
pub fn is_model_invocable(skill: &Skill) -> bool {
    model_access(skill).is_ok()
}

/// The model-access rule: `Ok` when the model may use `skill` (activate it,
/// run its scripts, list and call its tools, find it in the catalog and in
/// searches), else why not. A skill is refused when it is not served, when
/// its mode is `manual`, or when its frontmatter says
/// `disable-model-invocation: true`. Every model-facing path of every face
/// asks here; nothing else decides it.
pub fn model_access(skill: &Skill) -> Result<(), ModelRefusal> {
    let reason = if !is_served(skill) {
        ModelRefusalReason::NotServed
    } else if skill.mode == SkillMode::Manual {
        ModelRefusalReason::ModeManual
    } else if !skill.model_invocable() {
        ModelRefusalReason::DisableModelInvocation
    } else {
        return Ok(());
    };
    Err(ModelRefusal {
        skill: skill.name.clone(),
        reason,
        user_invocable: is_user_invocable(skill),
    })
}

/// The served skills of `deck` the model may use ([`model_access`]), in
/// deck order.
pub fn model_usable(deck: &Deck) -> impl Iterator<Item = &Skill> {
    deck.skills().iter().filter(|s| model_access(s).is_ok())
}

/// Why [`model_access`] refused a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelRefusalReason {
    /// The skill is not served (mode `off`, or not eligible here).
    NotServed,
    /// The operator set the skill's mode to `manual`.
    ModeManual,
    /// The skill's frontmatter says `disable-model-invocation: true`.
    DisableModelInvocation,
}

impl ModelRefusalReason {
    /// The stable code of this reason (for logs, bindings and tests).
    pub fn code(self) -> &'static str {
        match self {
            ModelRefusalReason::NotServed => "skill-not-served",
            ModelRefusalReason::ModeManual => "skill-mode-manual",
            ModelRefusalReason::DisableModelInvocation => "model-invocation-disabled",
        }
    }

    /// Where the refusal comes from, as the skill's author or the operator
    /// wrote it.
    pub fn source(self) -> &'static str {
        match self {
            ModelRefusalReason::NotServed => "it is not served",
            ModelRefusalReason::ModeManual => "its mode is \"manual\"",
            ModelRefusalReason::DisableModelInvocation => "disable-model-invocation: true",
        }
    }
}

/// What the model tried to do with a skill (the refusal's message says it,
/// and how the user can do it instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelUse<'a> {
    /// Activate it (`activate_skill`).
    Activate,
    /// Run its file `path` (`run_skill_script`).
    Script {
        /// The file, relative to the skill folder.
        path: &'a str,
    },
    /// Call its tool `tool` (as the skill declares it) under the full name
    /// `full_name` (`{skill}__{tool}`).
    Tool {
        /// The tool's name as the skill declares it.
        tool: &'a str,
        /// `{skill}__{tool}`.
        full_name: &'a str,
    },
    /// Run the model's own code with its folder mounted (`run_code` with
    /// `skill`).
    Code,
}

/// [`model_access`] refused a skill: which, why, and whether the user may
/// invoke it as a prompt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "skill '{skill}' is user-invoked only ({}): the model may not activate it, run its scripts \
     or call its tools",
    reason.source()
)]
pub struct ModelRefusal {
    /// The skill's name.
    pub skill: String,
    /// Why.
    pub reason: ModelRefusalReason,
    /// True when the user may invoke the skill (as the prompt `/name`).
    pub user_invocable: bool,
}

impl ModelRefusal {
    /// The stable code of the refusal ([`ModelRefusalReason::code`]).
    pub fn code(&self) -> &'static str {
        self.reason.code()
    }

    /// The refusal as a tool error for the model
    /// ([`ToolErrorKind::NotModelInvocable`]): what was refused, why,
    /// that nothing ran, and how the user can do it instead.
    pub fn to_tool_error(&self, attempt: ModelUse<'_>) -> ToolError {
        let name = &self.skill;
        let what = match attempt {
            ModelUse::Activate => "activate it".to_owned(),
            ModelUse::Script { path } => format!("run its script '{path}'"),
            ModelUse::Tool { full_name, .. } => format!("call its tool '{full_name}'"),
            ModelUse::Code => "run code with its files".to_owned(),
        };
        let prompt = if self.user_invocable {
            format!("invoke it as the prompt /{name}")
        } else {
            String::new()
        };
        let command = match attempt {
            ModelUse::Activate => format!("`skilldeck activate {name}`"),
            ModelUse::Script { path } => format!("`skilldeck run {name} {path}`"),
            ModelUse::Tool { tool, .. } => format!("`skilldeck call {name} {tool} --args JSON`"),
            ModelUse::Code => format!("`skilldeck run {name} PATH`"),
        };
        let how = if prompt.is_empty() {
            format!("the user can run it on the skilldeck host with {command}")
        } else {
            format!("the user can {prompt}, or run it on the skilldeck host with {command}")
        };
        let message = if self.reason == ModelRefusalReason::NotServed {
            format!("skill '{name}' is not served, so the model may not {what}; nothing was run")
        } else {
            format!(
                "skill '{name}' is user-invoked only ({}), so the model may not {what}; nothing \
                 was run. Do not retry: {how}.",
                self.reason.source()
            )
        };
        ToolError::new(ToolErrorKind::NotModelInvocable, message)
    }
}

/// True when the user may invoke `skill` (served, and not
/// `user-invocable: false`).
pub fn is_user_invocable(skill: &Skill) -> bool {
    is_served(skill) && skill.user_invocable()
}

/// The served skills of `deck`, in deck order.
pub fn served(deck: &Deck) -> impl Iterator<Item = &Skill> {
    deck.skills().iter().filter(|s| is_served(s))
}

/// The served skill named `name` (the core's [`skilldeck::lookup`]: the
/// exact name, else the one name equal to it ignoring case and Unicode
/// compatibility forms): else [`skilldeck::Error::SkillOff`] when the deck
/// has it with mode `off`, [`skilldeck::Error::SkillIneligible`] (with the
/// reason) when this machine lacks what it requires, else the core's unknown-skill error (the reason
/// discovery skipped a folder of that name, or close served names).
pub fn require_served<'d>(deck: &'d Deck, name: &str) -> Result<&'d Skill, skilldeck::Error> {
    match skilldeck::lookup(deck, name) {
        skilldeck::Lookup::Exact(skill) if is_served(skill) => Ok(skill),
        skilldeck::Lookup::Exact(skill) => Err(not_served(skill)),
        skilldeck::Lookup::Suggestions(_) => Err(skilldeck::search::unknown_skill(
            deck,
            name,
            served(deck).map(|s| s.name.as_str()),
        )),
    }
}

/// The error for a skill the deck has but does not serve.
pub fn not_served(skill: &Skill) -> skilldeck::Error {
    match skill.ineligible_reason() {
        Some(reason) if skill.mode != skilldeck::SkillMode::Off => {
            skilldeck::Error::SkillIneligible {
                name: skill.name.clone(),
                reason: reason.to_owned(),
            }
        }
        _ => skilldeck::Error::SkillOff(skill.name.clone()),
    }
}
