//! Which skills a host serves and to whom, stated once: every face (MCP,
//! CLI, bindings) asks here instead of testing modes itself.
//!
//! - **served**: the skill's mode is not `off` and it is eligible on this
//!   machine (its `requires`); such a skill stays in the deck, so it can be
//!   named in errors with the reason, but no face offers it (catalog, tool
//!   lists);
//! - **model-invocable**: served, and the model may activate it (not
//!   `disable-model-invocation`, not mode `manual`);
//! - **user-invocable**: served, and the user may invoke it (not
//!   `user-invocable: false`).

use skilldeck::{Deck, Skill};

/// True when `skill` is served: its mode is not `off` and it is eligible (the core's
/// [`Skill::is_served`], where the rule is written).
pub fn is_served(skill: &Skill) -> bool {
    skill.is_served()
}

/// True when the model may activate `skill` (served, and not
/// `disable-model-invocation` or mode `manual`).
pub fn is_model_invocable(skill: &Skill) -> bool {
    is_served(skill) && skill.model_invocable()
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
