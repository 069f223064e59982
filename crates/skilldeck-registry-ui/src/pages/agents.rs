//! Agents: the list, create, and edit capabilities and settings.

use askama::Template as _;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use skilldeck_registry::names::AgentId;
use skilldeck_registry::wire::{Agent, AgentSpec};

use crate::error::UiError;
use crate::limits::PAGE_SIZE;
use crate::state::{Signed, UiState};
use crate::views::{AgentForm, AgentFormPage, AgentsPage, href_with};

/// The list's query.
#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    cursor: String,
}

/// `GET /ui/agents?cursor=`.
pub async fn list(
    State(state): State<UiState>,
    signed: Signed,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let cursor = (!query.cursor.is_empty()).then_some(query.cursor.as_str());
    let page = state
        .registry
        .list_agents(&signed.principal, cursor, Some(PAGE_SIZE))
        .await?;
    let view = AgentsPage {
        chrome: signed.chrome("agents"),
        agents: page.items,
        next_href: page
            .next_cursor
            .as_deref()
            .map(|c| href_with("/ui/agents", &[("cursor", c)])),
        first_href: cursor.map(|_| "/ui/agents".to_owned()),
    };
    Ok(Html(view.render()?).into_response())
}

/// An agent id from the path, or 400.
pub fn agent_id(id: &str) -> Result<AgentId, UiError> {
    AgentId::new(id).map_err(|e| UiError::BadInput(e.to_string()))
}

/// The form's fields as the registry's [`AgentSpec`], or what is wrong.
pub fn spec_of(form: &AgentForm) -> Result<AgentSpec, String> {
    let id = AgentId::new(form.id.trim()).map_err(|e| e.to_string())?;
    let number = |field: &str, text: &str| -> Result<Option<u32>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        match text.parse::<u32>() {
            Ok(0) | Err(_) => Err(format!("{field} must be a whole number of at least 1")),
            Ok(n) => Ok(Some(n)),
        }
    };
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let name = form.name.trim();
    if name.is_empty() {
        return Err("Give the agent a display name.".to_owned());
    }
    Ok(AgentSpec {
        id,
        name: name.to_owned(),
        capabilities: form
            .capabilities
            .split([',', ' ', '\n', '\t'])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect(),
        auto_discover: form.auto_discover,
        allowed_patterns: lines(&form.allowed_patterns),
        denied_patterns: lines(&form.denied_patterns),
        max_concurrent_executions: number(
            "Max concurrent executions",
            &form.max_concurrent_executions,
        )?,
        execution_timeout_secs: number("Execution timeout", &form.execution_timeout_secs)?,
        budget_tokens: number("Catalog budget", &form.budget_tokens)?,
        run_code: form.run_code,
    })
}

/// The form's fields of a stored agent.
pub fn form_of(agent: &Agent) -> AgentForm {
    let opt = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
    AgentForm {
        id: agent.spec.id.to_string(),
        name: agent.spec.name.clone(),
        capabilities: agent.spec.capabilities.join(", "),
        auto_discover: agent.spec.auto_discover,
        allowed_patterns: agent.spec.allowed_patterns.join("\n"),
        denied_patterns: agent.spec.denied_patterns.join("\n"),
        budget_tokens: opt(agent.spec.budget_tokens),
        max_concurrent_executions: opt(agent.spec.max_concurrent_executions),
        execution_timeout_secs: opt(agent.spec.execution_timeout_secs),
        run_code: agent.spec.run_code,
    }
}

fn form_page(
    signed: &Signed,
    editing: bool,
    form: AgentForm,
    error: Option<UiError>,
) -> Result<Response, UiError> {
    let status = error
        .as_ref()
        .map(UiError::status)
        .unwrap_or(axum::http::StatusCode::OK);
    let page = AgentFormPage {
        chrome: signed.chrome("agents"),
        editing,
        form,
        error: error.map(|e| e.to_string()),
    };
    Ok((status, Html(page.render()?)).into_response())
}

/// `GET /ui/agents/new`.
pub async fn new_form(signed: Signed) -> Result<Response, UiError> {
    form_page(&signed, false, AgentForm::default(), None)
}

/// `POST /ui/agents`.
pub async fn create(
    State(state): State<UiState>,
    signed: Signed,
    Form(form): Form<AgentForm>,
) -> Result<Response, UiError> {
    let spec = match spec_of(&form) {
        Ok(s) => s,
        Err(message) => return form_page(&signed, false, form, Some(UiError::BadInput(message))),
    };
    match state.registry.create_agent(&signed.principal, spec).await {
        Ok(agent) => {
            state
                .sessions
                .set_flash(
                    &signed.session.id,
                    format!("Agent {} created. Choose its skills below.", agent.spec.id),
                )
                .await;
            Ok(Redirect::to(&format!("/ui/agents/{}/skills", agent.spec.id)).into_response())
        }
        Err(e) => form_page(&signed, false, form, Some(e.into())),
    }
}

/// `GET /ui/agents/{id}/edit`.
pub async fn edit_form(
    State(state): State<UiState>,
    signed: Signed,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let id = agent_id(&id)?;
    let agent = state.registry.agent(&signed.principal, &id).await?;
    form_page(&signed, true, form_of(&agent), None)
}

/// `POST /ui/agents/{id}/edit`.
pub async fn update(
    State(state): State<UiState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(mut form): Form<AgentForm>,
) -> Result<Response, UiError> {
    let id = agent_id(&id)?;
    // The id is the path's, whatever the (read-only) field says.
    form.id = id.to_string();
    let spec = match spec_of(&form) {
        Ok(s) => s,
        Err(message) => return form_page(&signed, true, form, Some(UiError::BadInput(message))),
    };
    match state
        .registry
        .update_agent(&signed.principal, &id, spec)
        .await
    {
        Ok(_) => {
            state
                .sessions
                .set_flash(&signed.session.id, format!("Settings of {id} saved."))
                .await;
            Ok(Redirect::to(&format!("/ui/agents/{id}/skills")).into_response())
        }
        Err(e) => form_page(&signed, true, form, Some(e.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_form_becomes_a_spec_with_lists_and_optional_numbers() {
        let form = AgentForm {
            id: "bot-1".into(),
            name: "Bot".into(),
            capabilities: "python, network  shell".into(),
            auto_discover: true,
            allowed_patterns: "acme/*\n\n".into(),
            denied_patterns: "".into(),
            budget_tokens: "800".into(),
            max_concurrent_executions: "".into(),
            execution_timeout_secs: " 30 ".into(),
            run_code: true,
        };
        let spec = spec_of(&form).unwrap();
        assert_eq!(spec.capabilities, ["python", "network", "shell"]);
        assert_eq!(spec.allowed_patterns, ["acme/*"]);
        assert!(spec.denied_patterns.is_empty());
        assert_eq!(spec.budget_tokens, Some(800));
        assert_eq!(spec.max_concurrent_executions, None);
        assert_eq!(spec.execution_timeout_secs, Some(30));
        assert!(spec.run_code);
    }

    #[test]
    fn an_agent_form_with_a_bad_id_or_number_is_refused() {
        let mut form = AgentForm {
            id: "Bad Id".into(),
            name: "x".into(),
            ..AgentForm::default()
        };
        assert!(spec_of(&form).is_err());
        form.id = "ok".into();
        form.budget_tokens = "0".into();
        assert!(spec_of(&form).unwrap_err().contains("Catalog budget"));
        form.budget_tokens = "-3".into();
        assert!(spec_of(&form).is_err());
    }
}

/// The delete form: a box ticked to confirm.
#[derive(Deserialize, Debug, Default)]
pub struct DeleteForm {
    #[serde(default, deserialize_with = "crate::views::checkbox")]
    confirm: bool,
}

/// `POST /ui/agents/{id}/delete`: deletes the agent (its assignments go,
/// its tokens are revoked), once the box confirming it is ticked.
pub async fn delete(
    State(state): State<UiState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<DeleteForm>,
) -> Result<Response, UiError> {
    let id = agent_id(&id)?;
    if !form.confirm {
        state
            .sessions
            .set_flash(
                &signed.session.id,
                format!("{id} was not deleted: tick the box to confirm, then Delete agent."),
            )
            .await;
        return Ok(Redirect::to(&format!("/ui/agents/{id}/skills#delete-h")).into_response());
    }
    state.registry.delete_agent(&signed.principal, &id).await?;
    state
        .sessions
        .set_flash(
            &signed.session.id,
            format!("Agent {id} deleted; its tokens were revoked."),
        )
        .await;
    Ok(Redirect::to("/ui/agents").into_response())
}
