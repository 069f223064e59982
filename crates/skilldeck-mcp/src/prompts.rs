//! The prompts face: each user-invocable skill (not `user-invocable: false`,
//! not mode `off`) is a prompt named after it, so clients offer it as
//! `/name`. Its one optional argument, `arguments`, is described by the
//! skill's `argument-hint`. Getting a prompt renders the skill's
//! instructions with those arguments as a user message (the user chose the
//! skill, so the session tracker is not consulted).

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptResult, JsonObject, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;

use crate::cursor;
use crate::engine::{Engine, Snapshot};

/// The prompt argument.
pub const ARGUMENTS: &str = "arguments";

/// Prompts per `prompts/list` page.
pub const PROMPT_PAGE_SIZE: usize = 1_000;

fn prompt_for(skill: &skilldeck::Skill) -> Prompt {
    let hint = skill
        .argument_hint()
        .map(str::to_owned)
        .unwrap_or_else(|| "Arguments for the skill (optional)".to_owned());
    Prompt::new(
        skill.name.clone(),
        Some(skill.description.clone()),
        Some(vec![
            PromptArgument::new(ARGUMENTS)
                .with_description(hint)
                .with_required(false),
        ]),
    )
}

/// `prompts/list`, a page at a time.
pub fn list(snapshot: &Snapshot, cursor_in: Option<&str>) -> Result<ListPromptsResult, ErrorData> {
    let skills: Vec<&skilldeck::Skill> = snapshot.user_invocable().collect();
    let (range, next) = cursor::page(
        cursor_in,
        snapshot.generation,
        skills.len(),
        PROMPT_PAGE_SIZE,
    )?;
    let mut result =
        ListPromptsResult::with_all_items(skills[range].iter().map(|s| prompt_for(s)).collect());
    result.next_cursor = next;
    Ok(result)
}

/// `prompts/get`.
pub fn get(
    engine: &Engine,
    snapshot: &Snapshot,
    name: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let skill = snapshot
        .require(name)
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    if !skilldeck_host::is_user_invocable(skill) {
        return Err(ErrorData::invalid_params(
            format!("skill '{name}' is not user-invocable (user-invocable: false)"),
            None,
        ));
    }
    let args = match arguments.and_then(|a| a.get(ARGUMENTS)) {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                format!("prompt argument `{ARGUMENTS}` must be a string"),
                None,
            ));
        }
    };
    if let Some(unknown) = arguments.and_then(|a| a.keys().find(|k| *k != ARGUMENTS)) {
        return Err(ErrorData::invalid_params(
            format!("unknown prompt argument `{unknown}`; the only argument is `{ARGUMENTS}`"),
            None,
        ));
    }
    let text = engine
        .host()
        .render(skill, args)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let mut result =
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text.to_string())]);
    result.description = Some(skill.description.clone());
    Ok(result)
}
