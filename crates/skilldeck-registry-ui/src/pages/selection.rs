//! An agent's skill selection: every skill in the registry with its
//! toggle, priority, version or label pin and grants, next to a live
//! preview of the agent's catalog exactly as the model sees it (the
//! registry's `catalog_preview`), its size in tokens against the budget
//! and what was left out and why. Without JavaScript each row's form posts
//! and the page comes back; with htmx a change posts the row and the
//! answer swaps the row and (out of band) the preview.

use askama::Template as _;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use skilldeck_registry::SHADOWED_BY_ASSIGNMENT;
use skilldeck_registry::names::{AgentId, LATEST, SkillRef};
use skilldeck_registry::wire::{
    ASSIGNMENT_PENDING, Assignment, AssignmentView, Grants, Resolved, SkillDetail,
};
use skilldeck_registry::{BrowseQuery, BrowseSort, Need};

use crate::error::UiError;
use crate::limits::SELECTION_PAGE_SIZE;
use crate::pages::agents::agent_id;
use crate::pages::skills::{parse_pin, skill_ref};
use crate::state::{Signed, UiState, is_htmx};
use crate::views::{
    AgentTokenRow, Clash, ConnectView, LeftOut, PreviewFragment, PreviewView, SelectionFilters,
    SelectionPage, SelectionUpdate, SkillRow, checkbox, href_with,
};

/// The page's query: a budget to try instead of the agent's.
#[derive(Deserialize, Default)]
pub struct BudgetQuery {
    #[serde(default)]
    budget: String,
}

/// The selection page's query: the budget to try, and the filters and
/// page of the skill list (all server-side: the page stays small at any
/// number of skills).
#[derive(Deserialize, Default)]
pub struct SelectionQuery {
    #[serde(default)]
    budget: String,
    /// Free text: the registry's search over names and descriptions.
    #[serde(default)]
    q: String,
    /// Only this namespace.
    #[serde(default)]
    namespace: String,
    /// `all` (default), `assigned` or `unassigned`.
    #[serde(default)]
    show: String,
    /// What the skill's `latest` version needs: `scripts`,
    /// `allowed-tools` or `requires:<capability>` (empty: anything).
    #[serde(default)]
    need: String,
    /// Skills skipped before this page (of the other skills).
    #[serde(default)]
    offset: String,
}

impl SelectionQuery {
    fn show(&self) -> &'static str {
        match self.show.as_str() {
            "assigned" => "assigned",
            "unassigned" => "unassigned",
            _ => "all",
        }
    }

    /// Whether the assignment of `namespace/name` matches the text and
    /// namespace filters (the other skills are filtered by the registry).
    fn matches(&self, namespace: &str, name: &str, description: &str) -> bool {
        let ns = self.namespace.trim();
        if !ns.is_empty() && ns != namespace {
            return false;
        }
        let q = self.q.trim().to_lowercase();
        q.is_empty()
            || q.split_whitespace().any(|word| {
                name.to_lowercase().contains(word) || description.to_lowercase().contains(word)
            })
    }

    /// This page's link at `offset` (empty: the first page).
    fn href(&self, agent: &AgentId, offset: &str) -> String {
        href_with(
            &format!("/ui/agents/{agent}/skills"),
            &[
                ("q", self.q.trim()),
                ("namespace", self.namespace.trim()),
                (
                    "show",
                    if self.show() == "all" {
                        ""
                    } else {
                        self.show()
                    },
                ),
                ("need", self.need.trim()),
                ("budget", self.budget.trim()),
                ("offset", offset),
            ],
        )
    }
}

impl BudgetQuery {
    fn tokens(&self) -> Option<u32> {
        self.budget.trim().parse::<u32>().ok().filter(|n| *n > 0)
    }
}

/// What one skill row needs besides its assignment.
struct SkillInfo {
    namespace: String,
    name: String,
    description: String,
    pin_options: Vec<String>,
}

/// `row-namespace--name` (neither part may contain `--`, so it is unique).
fn row_key(namespace: &str, name: &str) -> String {
    format!("row-{namespace}--{name}")
}

fn build_row(
    agent: &AgentId,
    info: SkillInfo,
    assignment: Option<&AssignmentView>,
    resolved: &Resolved,
    error: Option<String>,
) -> SkillRow {
    let in_set = resolved
        .skills
        .iter()
        .find(|s| s.namespace.as_str() == info.namespace && s.name == info.name);
    let excluded = resolved
        .excluded
        .iter()
        .find(|e| e.namespace.as_str() == info.namespace && e.name == info.name);
    let (status, status_class, status_detail) = match (in_set, excluded) {
        (Some(s), _) => (
            if s.source == "assigned" {
                "assigned".to_owned()
            } else {
                "auto-discovered".to_owned()
            },
            "ok",
            format!("serves {} ({})", s.version, s.via.replace(':', " ")),
        ),
        // Waiting for its label to be set or its version's review: the
        // same `pending` the API's assignment view and `agent show` say.
        (None, Some(e)) if assignment.is_some_and(|a| a.status == ASSIGNMENT_PENDING) => {
            (ASSIGNMENT_PENDING.to_owned(), "warn", e.detail.clone())
        }
        (None, Some(e)) => (format!("left out: {}", e.reason), "warn", e.detail.clone()),
        (None, None) => ("not selected".to_owned(), "plain", String::new()),
    };
    let (enabled, priority, pin, network, env) = match assignment {
        Some(a) => (
            a.assignment.enabled,
            a.assignment.priority,
            a.assignment
                .version
                .clone()
                .or_else(|| a.assignment.label.as_ref().map(|l| l.to_string()))
                .unwrap_or_else(|| LATEST.to_owned()),
            a.assignment.grants.network,
            a.assignment.grants.env.join(", "),
        ),
        None => (
            in_set.is_some(),
            in_set.map(|s| s.priority).unwrap_or(0),
            LATEST.to_owned(),
            false,
            String::new(),
        ),
    };
    SkillRow {
        key: row_key(&info.namespace, &info.name),
        action: format!("/ui/agents/{agent}/skills/{}/{}", info.namespace, info.name),
        namespace: info.namespace,
        name: info.name,
        description: info.description,
        status,
        status_class,
        status_detail,
        assigned: assignment.is_some(),
        in_set: in_set.is_some(),
        enabled,
        priority,
        pin,
        pin_options: info.pin_options,
        network,
        env,
        error,
    }
}

async fn preview_of(
    state: &UiState,
    signed: &Signed,
    agent: &AgentId,
    resolved: &Resolved,
    budget: Option<u32>,
) -> Result<PreviewView, UiError> {
    let preview = state
        .registry
        .catalog_preview(&signed.principal, agent, budget)
        .await?;
    let tokens = u32::try_from(preview.tokens).unwrap_or(u32::MAX);
    let mut left_out: Vec<LeftOut> = resolved
        .excluded
        .iter()
        .map(|e| LeftOut {
            name: format!("{}/{}", e.namespace, e.name),
            reason: e.reason.clone(),
            detail: e.detail.clone(),
        })
        .collect();
    left_out.extend(preview.omitted.iter().map(|o| LeftOut {
        name: o.name.clone(),
        reason: o.reason.clone(),
        detail: if o.reason == "budget" {
            "did not fit in the token budget".to_owned()
        } else {
            "left out of the catalog".to_owned()
        },
    }));
    let clashes = resolved
        .excluded
        .iter()
        .filter_map(|e| {
            e.shadowed_by.as_ref().map(|winner| Clash {
                name: e.name.clone(),
                left_out: format!("{}/{}", e.namespace, e.name),
                served_by: winner.clone(),
                by_assignment: e.reason == SHADOWED_BY_ASSIGNMENT,
            })
        })
        .collect();
    let meter_max = preview.budget.unwrap_or(tokens).max(tokens).max(1);
    Ok(PreviewView {
        agent: agent.to_string(),
        text: preview.text,
        tokens,
        budget: preview.budget,
        meter_max,
        meter_high: preview
            .budget
            .map(|b| b.saturating_mul(9) / 10)
            .unwrap_or(meter_max),
        included: preview.included,
        left_out,
        clashes,
    })
}

/// `GET /ui/agents/{id}/skills?q=&namespace=&need=&show=&offset=&budget=`: the
/// agent's assignments first (all of them that match the filters), then
/// one page of the other skills, searched and filtered by the registry.
pub async fn page(
    State(state): State<UiState>,
    signed: Signed,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(query): Query<SelectionQuery>,
) -> Result<Response, UiError> {
    let id = agent_id(&id)?;
    let p = &signed.principal;
    let agent = state.registry.agent(p, &id).await?;
    let assignments = state.registry.assignments(p, &id).await?;
    let resolved = state.registry.resolve(p, &id).await?;
    let show = query.show();
    let need = Need::parse(&query.need)?;
    let namespace_filter = Some(query.namespace.trim().to_owned()).filter(|n| !n.is_empty());
    // The assignments that match the need filter (the registry's rule,
    // the same as for the other skills below).
    let needing = match &need {
        Some(n) => Some(
            state
                .registry
                .skills_needing(p, namespace_filter.as_deref(), n)
                .await?,
        ),
        None => None,
    };
    let mut assigned_rows = Vec::new();
    if show != "unassigned" {
        for a in &assignments {
            let (namespace, name) = (a.namespace.to_string(), a.name.clone());
            if needing
                .as_ref()
                .is_some_and(|set| !set.contains(&format!("{namespace}/{name}")))
            {
                continue;
            }
            let detail = state
                .registry
                .skill(&signed.principal, &skill_ref(&namespace, &name)?)
                .await?;
            if !query.matches(&namespace, &name, &detail.description) {
                continue;
            }
            assigned_rows.push(build_row(&id, skill_info(detail), Some(a), &resolved, None));
        }
    }
    let assigned: std::collections::HashSet<(String, String)> = assignments
        .iter()
        .map(|a| (a.namespace.to_string(), a.name.clone()))
        .collect();
    let mut rows = Vec::new();
    let mut next_page = None;
    let mut others = None;
    let offset = crate::pages::skills::offset_of(&query.offset);
    if show != "assigned" {
        let page = state
            .registry
            .browse_skills(
                p,
                &BrowseQuery {
                    q: Some(query.q.trim().to_owned()).filter(|q| !q.is_empty()),
                    namespace: namespace_filter.clone(),
                    need: need.clone(),
                    sort: BrowseSort::Default,
                    offset,
                    limit: Some(SELECTION_PAGE_SIZE),
                },
            )
            .await?;
        let shown = page.items.len() as u64;
        if page.offset + shown < page.total && shown > 0 {
            next_page = Some(query.href(&id, &(page.offset + shown).to_string()));
        }
        others = Some((
            if shown == 0 { 0 } else { page.offset + 1 },
            page.offset + shown,
            page.total,
        ));
        for s in page.items {
            let key = (s.namespace.to_string(), s.name.clone());
            // Listed above, with their assignment.
            if assigned.contains(&key) {
                continue;
            }
            let mut pin_options = vec![LATEST.to_owned()];
            pin_options.extend(s.latest.clone());
            let info = SkillInfo {
                namespace: key.0,
                name: key.1,
                description: s.description,
                pin_options,
            };
            rows.push(build_row(&id, info, None, &resolved, None));
        }
    }
    let facets = state.registry.skill_facets(p).await?;
    let budget = BudgetQuery {
        budget: query.budget.clone(),
    };
    let preview = preview_of(&state, &signed, &id, &resolved, budget.tokens()).await?;
    let tokens = if p.is_admin() {
        Some(agent_tokens(&state, &signed, &id).await?)
    } else {
        None
    };
    let page = SelectionPage {
        chrome: signed.chrome("agents"),
        connect: connect_view(&headers, &id),
        tokens,
        agent,
        assigned_rows,
        rows,
        first_page: (offset > 0).then(|| query.href(&id, "")),
        others,
        next_page,
        filters: SelectionFilters {
            q: query.q.trim().to_owned(),
            namespace: query.namespace.trim().to_owned(),
            show,
            budget: query.budget.trim().to_owned(),
            need: need.as_ref().map(Need::as_text).unwrap_or_default(),
            needs: crate::pages::skills::need_choices(&facets.capabilities),
        },
        preview,
        oob: false,
    };
    Ok(Html(page.render()?).into_response())
}

/// Most token pages read to find an agent's tokens.
const MAX_TOKEN_PAGES: usize = 20;

/// The tokens scoped to agent `id` (revoked and expired ones included, so
/// that the page shows what was made for it).
async fn agent_tokens(
    state: &UiState,
    signed: &Signed,
    id: &AgentId,
) -> Result<Vec<AgentTokenRow>, UiError> {
    let scope = format!("agent:{id}");
    let mut rows = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_TOKEN_PAGES {
        let page = state
            .registry
            .list_tokens(&signed.principal, cursor.as_deref(), None)
            .await?;
        rows.extend(
            page.items
                .into_iter()
                .filter(|t| t.scopes.contains(&scope))
                .map(|t| AgentTokenRow {
                    id: t.id,
                    name: t.name,
                    status: t.status,
                    created_at: t.created_at,
                    expires_at: t.expires_at.unwrap_or_default(),
                    last_used_at: t.last_used_at.unwrap_or_default(),
                }),
        );
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    Ok(rows)
}

/// The registry's URL as this request reached it: the scheme a reverse
/// proxy reports (else http) and the Host header, when it is a plain host
/// name or address with an optional port.
fn registry_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("REGISTRY-HOST:7878");
    let scheme = if crate::state::came_over_https(headers) {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{host}")
}

/// The commands and MCP configuration that connect a host to agent `id`.
fn connect_view(headers: &HeaderMap, id: &AgentId) -> ConnectView {
    let registry = registry_url(headers);
    let token_command = format!(
        "skilldeck registry token create --agent {id} --registry {registry} --token-file admin-token > {id}.token"
    );
    let serve_command = format!(
        "skilldeck serve --registry {registry} --agent {id} --registry-token-file {id}.token"
    );
    let mcp = serde_json::json!({
        "mcpServers": {
            id.as_str(): {
                "command": "skilldeck",
                "args": [
                    "serve", "--registry", registry, "--agent", id.as_str(),
                    "--registry-token-file", format!("/absolute/path/to/{id}.token"),
                ],
            }
        }
    });
    ConnectView {
        mcp_config: serde_json::to_string_pretty(&mcp).unwrap_or_default(),
        registry,
        token_command,
        serve_command,
    }
}

/// A row's facts from the skill's detail: every label and version of the
/// skill is offered in its pin field.
fn skill_info(detail: SkillDetail) -> SkillInfo {
    let mut pin_options: Vec<String> = detail.labels.keys().cloned().collect();
    pin_options.extend(detail.versions.into_iter().map(|v| v.version));
    SkillInfo {
        namespace: detail.namespace.to_string(),
        name: detail.name,
        description: detail.description,
        pin_options,
    }
}

/// `GET /ui/agents/{id}/preview?budget=`: the preview alone (htmx); a
/// browser without JavaScript is sent to the page.
pub async fn preview(
    State(state): State<UiState>,
    signed: Signed,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(query): Query<BudgetQuery>,
) -> Result<Response, UiError> {
    let id = agent_id(&id)?;
    if !is_htmx(&headers) {
        let to = href_with(
            &format!("/ui/agents/{id}/skills"),
            &[("budget", &query.budget)],
        );
        return Ok(Redirect::to(&to).into_response());
    }
    let resolved = state.registry.resolve(&signed.principal, &id).await?;
    let preview = preview_of(&state, &signed, &id, &resolved, query.tokens()).await?;
    Ok(Html(
        PreviewFragment {
            preview,
            oob: false,
        }
        .render()?,
    )
    .into_response())
}

/// A row's form.
#[derive(Deserialize, Debug, Default)]
pub struct RowForm {
    #[serde(default, deserialize_with = "checkbox")]
    enabled: bool,
    #[serde(default)]
    priority: String,
    #[serde(default)]
    pin: String,
    #[serde(default, deserialize_with = "checkbox")]
    network: bool,
    #[serde(default)]
    env: String,
}

/// The row's fields as an [`Assignment`], or what is wrong.
pub fn assignment_of(form: &RowForm) -> Result<Assignment, String> {
    let priority = match form.priority.trim() {
        "" => 0,
        text => text
            .parse::<i32>()
            .map_err(|_| format!("Priority '{text}' is not a whole number."))?,
    };
    let (version, label) = parse_pin(&form.pin)?;
    let env = form
        .env
        .split([',', ' ', '\n', '\t'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect();
    Ok(Assignment {
        version,
        label,
        enabled: form.enabled,
        priority,
        grants: Grants {
            network: form.network,
            env,
        },
        allow_pending: false,
    })
}

/// `POST /ui/agents/{id}/skills/{namespace}/{name}`: assign or update.
pub async fn save(
    State(state): State<UiState>,
    signed: Signed,
    headers: HeaderMap,
    Path((id, namespace, name)): Path<(String, String, String)>,
    Form(form): Form<RowForm>,
) -> Result<Response, UiError> {
    let id = agent_id(&id)?;
    let skill = skill_ref(&namespace, &name)?;
    let outcome = match assignment_of(&form) {
        Ok(a) => state
            .registry
            .assign(&signed.principal, &id, &skill, a)
            .await
            .map(|_| ())
            .map_err(UiError::from),
        Err(message) => Err(UiError::BadInput(message)),
    };
    after_change(&state, &signed, &headers, &id, &skill, outcome, "saved").await
}

/// `POST /ui/agents/{id}/skills/{namespace}/{name}/remove`: unassign.
pub async fn remove(
    State(state): State<UiState>,
    signed: Signed,
    headers: HeaderMap,
    Path((id, namespace, name)): Path<(String, String, String)>,
) -> Result<Response, UiError> {
    let id = agent_id(&id)?;
    let skill = skill_ref(&namespace, &name)?;
    let outcome = state
        .registry
        .unassign(&signed.principal, &id, &skill)
        .await
        .map_err(UiError::from);
    after_change(&state, &signed, &headers, &id, &skill, outcome, "removed").await
}

/// htmx: the row and the preview (out of band); otherwise back to the
/// page (with the error as a flash message when the change failed).
async fn after_change(
    state: &UiState,
    signed: &Signed,
    headers: &HeaderMap,
    id: &AgentId,
    skill: &SkillRef,
    outcome: Result<(), UiError>,
    done: &str,
) -> Result<Response, UiError> {
    if !is_htmx(headers) {
        let message = match &outcome {
            Ok(()) => format!("{skill}: assignment {done}."),
            Err(e) => format!("{skill}: not saved: {e}"),
        };
        state.sessions.set_flash(&signed.session.id, message).await;
        let key = row_key(skill.namespace().as_str(), skill.name());
        return Ok(Redirect::to(&format!("/ui/agents/{id}/skills#{key}")).into_response());
    }
    let status = outcome
        .as_ref()
        .err()
        .map(UiError::status)
        .unwrap_or(axum::http::StatusCode::OK);
    let p = &signed.principal;
    let detail = state.registry.skill(p, skill).await?;
    let assignments = state.registry.assignments(p, id).await?;
    let resolved = state.registry.resolve(p, id).await?;
    let assignment = assignments
        .iter()
        .find(|a| a.namespace == *skill.namespace() && a.name == skill.name());
    let row = build_row(
        id,
        skill_info(detail),
        assignment,
        &resolved,
        outcome.err().map(|e| e.to_string()),
    );
    let preview = preview_of(state, signed, id, &resolved, None).await?;
    let fragment = SelectionUpdate {
        chrome: signed.chrome("agents"),
        row,
        preview,
        oob: true,
    };
    // htmx swaps only 2xx answers by default: an error row is sent as 200
    // with the error shown in it; the status is kept in a header.
    let mut response = Html(fragment.render()?).into_response();
    if let Ok(v) = status.as_u16().to_string().parse() {
        response.headers_mut().insert("x-skilldeck-status", v);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(priority: &str, pin: &str, env: &str) -> RowForm {
        RowForm {
            enabled: true,
            priority: priority.into(),
            pin: pin.into(),
            network: true,
            env: env.into(),
        }
    }

    #[test]
    fn a_pin_is_a_version_when_it_starts_with_a_digit_else_a_label() {
        let a = assignment_of(&form("5", "1.2.0", "")).unwrap();
        assert_eq!((a.version.as_deref(), a.label), (Some("1.2.0"), None));
        let a = assignment_of(&form("", "production", "")).unwrap();
        assert_eq!(
            a.label.map(|l| l.to_string()).as_deref(),
            Some("production")
        );
        assert_eq!(a.priority, 0);
        let a = assignment_of(&form("-2", "latest", "")).unwrap();
        assert_eq!((a.version, a.label, a.priority), (None, None, -2));
        assert!(assignment_of(&form("1", "Bad Label", "")).is_err());
    }

    #[test]
    fn grants_env_names_are_split_on_commas_and_spaces() {
        let a = assignment_of(&form("1", "", "API_KEY, REGION  HOME")).unwrap();
        assert_eq!(a.grants.env, ["API_KEY", "REGION", "HOME"]);
        assert!(a.grants.network && a.enabled);
    }

    #[test]
    fn a_priority_that_is_not_a_number_is_refused() {
        assert!(
            assignment_of(&form("high", "", ""))
                .unwrap_err()
                .contains("Priority")
        );
    }
}
