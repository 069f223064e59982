//! Sign in with an API token, sign out. The token is checked once by the
//! registry (`authenticate`) and dropped; the session (a fresh id: no
//! session fixation) then holds the resulting principal.

use std::sync::Arc;

use askama::Template as _;
use axum::Form;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;

use crate::error::UiError;
use crate::limits::MAX_TOKEN_LEN;
use crate::session::cleared_cookie;
use crate::state::{MaybeSession, UiState};
use crate::views::{Chrome, SignInPage};

/// `GET /ui`: to the skills (or the sign-in page).
pub async fn home() -> Redirect {
    Redirect::to("/ui/skills")
}

/// `GET /ui/signin`: the form, in an anonymous session that carries its
/// CSRF token.
pub async fn signin_form(
    State(state): State<UiState>,
    headers: HeaderMap,
    MaybeSession(session): MaybeSession,
) -> Result<Response, UiError> {
    if session.as_ref().is_some_and(|s| s.principal.is_some()) {
        return Ok(Redirect::to("/ui/skills").into_response());
    }
    let (session, new) = match session {
        Some(s) => (s, false),
        None => (state.sessions.create(None)?, true),
    };
    let page = SignInPage {
        chrome: Chrome::new(session.csrf.clone(), None, "", None),
        error: None,
    };
    let mut response = Html(page.render()?).into_response();
    if new {
        response
            .headers_mut()
            .insert(header::SET_COOKIE, state.cookie_for(&headers, &session.id)?);
    }
    Ok(response)
}

/// The sign-in form.
#[derive(Deserialize)]
pub struct SignInForm {
    #[serde(default)]
    token: String,
}

/// `POST /ui/signin`.
pub async fn signin(
    State(state): State<UiState>,
    headers: HeaderMap,
    MaybeSession(session): MaybeSession,
    Form(form): Form<SignInForm>,
) -> Result<Response, UiError> {
    // The CSRF check let this through, so an (anonymous) session exists.
    let Some(session) = session else {
        return Err(UiError::SignInRequired);
    };
    let token = form.token.trim();
    let refused = |message: &str| -> Result<Response, UiError> {
        let page = SignInPage {
            chrome: Chrome::new(session.csrf.clone(), None, "", None),
            error: Some(message.to_owned()),
        };
        Ok((StatusCode::UNAUTHORIZED, Html(page.render()?)).into_response())
    };
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return refused("Enter an API token.");
    }
    let principal = match state.registry.authenticate(token).await {
        Ok(p) => p,
        Err(_) => return refused("That token is not valid."),
    };
    if !principal.can_read_all() {
        return refused(
            "This UI needs an admin or a publish token (an agent token reads only its own agent, through the API).",
        );
    }
    state.sessions.remove(&session.id);
    let signed = state.sessions.create(Some(Arc::new(principal)))?;
    let mut response = Redirect::to("/ui/skills").into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, state.cookie_for(&headers, &signed.id)?);
    Ok(response)
}

/// `POST /ui/signout`: the session is gone on the server, the cookie in
/// the browser.
pub async fn signout(
    State(state): State<UiState>,
    headers: HeaderMap,
    MaybeSession(session): MaybeSession,
) -> Response {
    if let Some(s) = session {
        state.sessions.remove(&s.id);
    }
    let mut response = Redirect::to("/ui/signin").into_response();
    if let Ok(v) = cleared_cookie(state.secure(&headers)).parse() {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}
