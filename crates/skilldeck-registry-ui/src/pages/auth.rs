//! Sign in with an API token, sign out. The token is checked once by the
//! registry (`authenticate`, which also throttles failed attempts per
//! client address) and dropped; the session (a fresh id: no session
//! fixation) then holds the resulting principal. The form itself needs no
//! session: its CSRF token is tied to a signed cookie ([`crate::signin`]).

use std::sync::Arc;

use askama::Template as _;
use axum::Form;
use axum::extract::State;
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use skilldeck_registry::RegistryError;
use skilldeck_registry::http::peer_of;

use crate::error::UiError;
use crate::limits::MAX_TOKEN_LEN;
use crate::session::cleared_cookie;
use crate::signin::{cleared_signin_cookie, signin_cookie, signin_cookie_from};
use crate::state::{MaybeSession, UiState};
use crate::views::{Chrome, SignInPage};

/// `GET /ui`: to the skills (or the sign-in page).
pub async fn home() -> Redirect {
    Redirect::to("/ui/skills")
}

/// `GET /ui/signin`: the form, its CSRF token tied to a signed cookie (no
/// server-side state for an anonymous visitor).
pub async fn signin_form(
    State(state): State<UiState>,
    headers: HeaderMap,
    MaybeSession(session): MaybeSession,
) -> Result<Response, UiError> {
    if session.is_some() {
        return Ok(Redirect::to("/ui/skills").into_response());
    }
    let key = state.signin_key.as_ref().as_ref().map_err(|e| {
        UiError::Random(crate::secret::RandomUnavailable::from_message(
            e.to_string(),
        ))
    })?;
    let existing = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(signin_cookie_from)
        .filter(|c| key.cookie_is_fresh(c))
        .map(str::to_owned);
    let (cookie, new) = match existing {
        Some(c) => (c, false),
        None => (key.new_cookie()?, true),
    };
    let page = SignInPage {
        chrome: Chrome::new(key.form_token(&cookie), None, "", None),
        error: None,
    };
    let mut response = Html(page.render()?).into_response();
    if new {
        let value = HeaderValue::from_str(&signin_cookie(&cookie, state.secure(&headers)))
            .map_err(|_| UiError::BadInput("sign-in cookie is not header text".to_owned()))?;
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

/// The sign-in form.
#[derive(Deserialize)]
pub struct SignInForm {
    #[serde(default)]
    token: String,
}

/// `POST /ui/signin` (the CSRF middleware checked the form's signed
/// cookie and token before this runs).
pub async fn signin(
    State(state): State<UiState>,
    headers: HeaderMap,
    extensions: Extensions,
    Form(form): Form<SignInForm>,
) -> Result<Response, UiError> {
    let cookie = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(signin_cookie_from)
        .unwrap_or_default()
        .to_owned();
    let form_token = match state.signin_key.as_ref() {
        Ok(key) => key.form_token(&cookie),
        Err(_) => String::new(),
    };
    let token = form.token.trim();
    let refused = |status: StatusCode, message: &str| -> Result<Response, UiError> {
        let page = SignInPage {
            chrome: Chrome::new(form_token.clone(), None, "", None),
            error: Some(message.to_owned()),
        };
        Ok((status, Html(page.render()?)).into_response())
    };
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return refused(StatusCode::UNAUTHORIZED, "Enter an API token.");
    }
    let client = peer_of(&extensions).map(|a| a.ip());
    let principal = match state.registry.authenticate(token, client).await {
        Ok(p) => p,
        Err(RegistryError::TooManyAttempts { retry_after }) => {
            let mut response = refused(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("Too many failed sign-ins; try again in {retry_after} seconds."),
            )?;
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            return Ok(response);
        }
        Err(RegistryError::Unauthorized(why)) => {
            return refused(
                StatusCode::UNAUTHORIZED,
                &format!("That token is not valid ({why})."),
            );
        }
        Err(e) => return Err(e.into()),
    };
    if !principal.can_read_all() {
        return refused(
            StatusCode::UNAUTHORIZED,
            "This UI needs an admin or a publish token (an agent token reads only its own agent, through the API).",
        );
    }
    let signed = state.sessions.create(Arc::new(principal))?;
    let mut response = Redirect::to("/ui/skills").into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, state.cookie_for(&headers, &signed.id)?);
    if let Ok(v) = HeaderValue::from_str(&cleared_signin_cookie(state.secure(&headers))) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
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
