//! The admin pages: tokens (list with scope, expiry and last use; create
//! with scopes and an expiry; revoke once confirmed) and the audit log
//! (filtered by actor and action, paged). Every decision is the
//! registry's: it refuses a non-admin (a 403 page), checks scopes and
//! writes the audit lines.

use askama::Template as _;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use skilldeck_registry::wire::{TokenInfo, TokenRequest};

use crate::error::UiError;
use crate::limits::{AUDIT_PAGE_SIZE, TOKENS_PAGE_SIZE};
use crate::state::{Signed, UiState};
use crate::views::{AuditPage, TokenRow, TokensPage, checkbox, href_with};

/// The expiries the create form offers: value (seconds; empty: never)
/// and label.
pub const EXPIRY_CHOICES: [(&str, &str); 6] = [
    ("", "never"),
    ("86400", "1 day"),
    ("604800", "7 days"),
    ("2592000", "30 days"),
    ("7776000", "90 days"),
    ("31536000", "1 year"),
];

/// A page's cursor.
#[derive(Deserialize, Default)]
pub struct CursorQuery {
    #[serde(default)]
    cursor: String,
}

fn row(t: TokenInfo) -> TokenRow {
    TokenRow {
        id: t.id,
        name: t.name,
        scopes: t.scopes.join(" "),
        source: t.source,
        status: t.status,
        created_at: t.created_at,
        expires_at: t.expires_at.unwrap_or_default(),
        last_used_at: t.last_used_at.unwrap_or_default(),
    }
}

async fn tokens_page(
    state: &UiState,
    signed: &Signed,
    cursor: &str,
    form: TokenForm,
    created: Option<(String, String)>,
    error: Option<String>,
) -> Result<TokensPage, UiError> {
    // Every token is an admin's to see; anyone else gets the 403 page
    // (the registry would list only the caller's own token).
    signed.principal.require_admin()?;
    let page = state
        .registry
        .list_tokens(
            &signed.principal,
            Some(cursor).filter(|c| !c.is_empty()),
            Some(TOKENS_PAGE_SIZE),
        )
        .await?;
    Ok(TokensPage {
        chrome: signed.chrome("tokens"),
        tokens: page.items.into_iter().map(row).collect(),
        next_href: page
            .next_cursor
            .as_deref()
            .map(|c| href_with("/ui/tokens", &[("cursor", c)])),
        first_href: (!cursor.is_empty()).then(|| "/ui/tokens".to_owned()),
        created,
        error,
        name: form.name,
        scope: form.scope,
        expiry_choices: EXPIRY_CHOICES
            .iter()
            .map(|(value, label)| (*value, *label, *value == form.expires.trim()))
            .collect(),
    })
}

/// `GET /ui/tokens?cursor=`.
pub async fn tokens(
    State(state): State<UiState>,
    signed: Signed,
    Query(query): Query<CursorQuery>,
) -> Result<Response, UiError> {
    let page = tokens_page(
        &state,
        &signed,
        &query.cursor,
        TokenForm::default(),
        None,
        None,
    )
    .await?;
    Ok(Html(page.render()?).into_response())
}

/// The create form.
#[derive(Deserialize, Default)]
pub struct TokenForm {
    #[serde(default)]
    name: String,
    /// Scopes, space- or comma-separated (`admin`, `publish:<ns>`,
    /// `read:<ns>`, `agent:<id>`).
    #[serde(default)]
    scope: String,
    /// Seconds until it expires (empty: never).
    #[serde(default)]
    expires: String,
}

/// `POST /ui/tokens`: a new token, its secret shown once on the answer
/// (never stored in the session or a redirect).
pub async fn create_token(
    State(state): State<UiState>,
    signed: Signed,
    Form(form): Form<TokenForm>,
) -> Result<Response, UiError> {
    let outcome: Result<_, UiError> = async {
        let expires_in_seconds = match form.expires.trim() {
            "" => None,
            text => Some(text.parse::<u64>().map_err(|_| {
                UiError::BadInput(format!("Expiry '{text}' is not a number of seconds."))
            })?),
        };
        let scopes: Vec<String> = form
            .scope
            .split([',', ' ', '\n', '\t'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let name = Some(form.name.trim().to_owned()).filter(|n| !n.is_empty());
        Ok(state
            .registry
            .create_token(
                &signed.principal,
                TokenRequest {
                    name,
                    scopes,
                    expires_in_seconds,
                },
            )
            .await?)
    }
    .await;
    match outcome {
        Ok(created) => {
            let page = tokens_page(
                &state,
                &signed,
                "",
                TokenForm::default(),
                Some((created.id, created.token)),
                None,
            )
            .await?;
            Ok(Html(page.render()?).into_response())
        }
        Err(e @ UiError::Registry(skilldeck_registry::RegistryError::Forbidden(_))) => Err(e),
        Err(e) => {
            let status = e.status();
            let page = tokens_page(&state, &signed, "", form, None, Some(e.to_string())).await?;
            Ok((status, Html(page.render()?)).into_response())
        }
    }
}

/// The revoke form.
#[derive(Deserialize, Default)]
pub struct RevokeForm {
    #[serde(default, deserialize_with = "checkbox")]
    confirm: bool,
}

/// `POST /ui/tokens/{id}/revoke`: revokes once the box is ticked.
pub async fn revoke_token(
    State(state): State<UiState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<RevokeForm>,
) -> Result<Response, UiError> {
    signed.principal.require_admin()?;
    if !form.confirm {
        let page = tokens_page(
            &state,
            &signed,
            "",
            TokenForm::default(),
            None,
            Some(format!(
                "Token {id} was not revoked: tick \u{201c}I understand\u{201d} to confirm."
            )),
        )
        .await?;
        return Ok((axum::http::StatusCode::BAD_REQUEST, Html(page.render()?)).into_response());
    }
    let info = state.registry.revoke_token(&signed.principal, &id).await?;
    state
        .sessions
        .set_flash(
            &signed.session.id,
            format!("Token {} ({}) is revoked.", info.id, info.name),
        )
        .await;
    Ok(Redirect::to("/ui/tokens").into_response())
}

/// The audit page's query.
#[derive(Deserialize, Default)]
pub struct AuditQuery {
    #[serde(default)]
    actor: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    cursor: String,
}

/// `GET /ui/audit?actor=&action=&cursor=`.
pub async fn audit(
    State(state): State<UiState>,
    signed: Signed,
    Query(query): Query<AuditQuery>,
) -> Result<Response, UiError> {
    let p = &signed.principal;
    let (actor, action) = (query.actor.trim(), query.action.trim());
    let page = state
        .registry
        .audit_filtered(
            p,
            actor,
            action,
            Some(query.cursor.as_str()).filter(|c| !c.is_empty()),
            Some(AUDIT_PAGE_SIZE),
        )
        .await?;
    let actions = state.registry.audit_actions(p).await?;
    let view = AuditPage {
        chrome: signed.chrome("audit"),
        entries: page.items,
        actor: actor.to_owned(),
        action: action.to_owned(),
        actions,
        next_href: page.next_cursor.as_deref().map(|c| {
            href_with(
                "/ui/audit",
                &[("actor", actor), ("action", action), ("cursor", c)],
            )
        }),
        first_href: (!query.cursor.is_empty())
            .then(|| href_with("/ui/audit", &[("actor", actor), ("action", action)])),
    };
    Ok(Html(view.render()?).into_response())
}
