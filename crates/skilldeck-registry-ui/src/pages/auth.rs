//! Sign in with an API token, sign out. The token is checked once by the
//! registry (`authenticate`, which also throttles failed attempts per
//! client address) and dropped; the session (a fresh id: no session
//! fixation) then holds the resulting principal. The form itself needs no
//! session: its CSRF token is tied to a signed cookie ([`crate::signin`]).
//! Single sign-on ([`crate::oidc`]) shares the page and the one rule of
//! who may use the UI ([`may_use_ui`]).

use askama::Template as _;
use axum::Form;
use axum::extract::State;
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use skilldeck_registry::http::peer_of;
use skilldeck_registry::{Principal, RegistryError, SignIn};

use crate::error::UiError;
use crate::limits::MAX_TOKEN_LEN;
use crate::session::cleared_cookie;
use crate::signin::{
    cleared_signin_cookie, cookie_is_fresh, form_token, new_cookie, signin_cookie,
    signin_cookie_from,
};
use crate::state::{MaybeSession, UiState};
use crate::views::{Chrome, SignInPage, SsoButton};

/// The one rule of who may use the UI, whichever way they signed in: a
/// principal that reads every skill (admin, publish or review scopes).
pub fn may_use_ui(p: &Principal) -> Result<(), &'static str> {
    if p.can_read_all() {
        Ok(())
    } else {
        Err(
            "This UI needs admin, publish or review access (an agent or read-only identity reads through the API).",
        )
    }
}

/// The single sign-on part of the sign-in page: the button, or why it
/// cannot be used (the provider's discovery or keys failed).
async fn sso_button(state: &UiState) -> Option<SsoButton> {
    let sso = state.sso.as_deref()?;
    let unavailable = sso.client().await.err();
    Some(SsoButton {
        label: sso.settings.display_name.clone(),
        unavailable,
    })
}

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
    let key = state.key.get().await?;
    let existing = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(signin_cookie_from)
        .filter(|c| cookie_is_fresh(c))
        .map(str::to_owned);
    let (cookie, new) = match existing {
        Some(c) => (c, false),
        None => (new_cookie()?, true),
    };
    let page = SignInPage {
        chrome: Chrome::new(form_token(key, &cookie), None, "", None),
        error: None,
        token_sign_in: state.config.token_sign_in,
        sso: sso_button(&state).await,
    };
    let mut response = Html(page.render()?).into_response();
    if new {
        let value = HeaderValue::from_str(&signin_cookie(&cookie, state.secure(&headers)))
            .map_err(|_| UiError::BadInput("sign-in cookie is not header text".to_owned()))?;
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

/// A refused sign-in: the form again, saying why.
fn refused(mut page: SignInPage, status: StatusCode, message: &str) -> Result<Response, UiError> {
    page.error = Some(message.to_owned());
    Ok((status, Html(page.render()?)).into_response())
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
    let key = state.key.get().await?;
    let form_token = form_token(key, &cookie);
    let sso = sso_button(&state).await;
    let token_sign_in = state.config.token_sign_in;
    let token = form.token.trim();
    let page = SignInPage {
        chrome: Chrome::new(form_token, None, "", None),
        error: None,
        token_sign_in,
        sso,
    };
    if !token_sign_in {
        return refused(
            page,
            StatusCode::FORBIDDEN,
            "Signing in with an API token is turned off on this registry; use single sign-on.",
        );
    }
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return refused(page, StatusCode::UNAUTHORIZED, "Enter an API token.");
    }
    let client = peer_of(&extensions).map(|a| a.ip());
    let principal = match state.registry.authenticate(token, client).await {
        Ok(p) => p,
        Err(RegistryError::TooManyAttempts { retry_after }) => {
            let mut response = refused(
                page,
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
                page,
                StatusCode::UNAUTHORIZED,
                &format!("That token is not valid ({why})."),
            );
        }
        Err(e) => return Err(e.into()),
    };
    if may_use_ui(&principal).is_err() {
        return refused(
            page,
            StatusCode::UNAUTHORIZED,
            "This UI needs an admin or a publish token (an agent token reads only its own agent, through the API).",
        );
    }
    let signed = state.sessions.create(principal, SignIn::Token).await?;
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
) -> Result<Response, UiError> {
    if let Some(s) = session {
        // Gone for every replica (the row is deleted), or the sign-out
        // fails visibly: never a sign-out that leaves the session alive.
        state.sessions.remove(&s.id).await?;
    }
    let mut response = Redirect::to("/ui/signin").into_response();
    if let Ok(v) = cleared_cookie(state.secure(&headers)).parse() {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(response)
}
