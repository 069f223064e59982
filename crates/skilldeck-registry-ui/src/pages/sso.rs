//! The sign-in with the provider: `GET /ui/oidc/start` sends the browser
//! to the provider's authorization endpoint (authorization code flow,
//! PKCE S256, a fresh `state` and `nonce`); `GET /ui/oidc/callback` takes
//! the code back and signs in only when every check holds:
//!
//! 1. the state cookie is ours (HMAC under the replicas' shared key) and
//!    younger than [`STATE_MAX_AGE`], and its `state` equals the query's
//!    (login CSRF: a code from another browser's flow is refused);
//! 2. the provider reported no error;
//! 3. the code is exchanged at the token endpoint with the PKCE verifier
//!    and the client secret;
//! 4. the ID token's signature verifies against the provider's JWKS (an
//!    algorithm it advertises; never `none`), and its `iss`, `aud`
//!    (and `azp`), `exp` and `nonce` are right;
//! 5. the configured rules give the user at least one scope, and those
//!    scopes may use the UI.
//!
//! Anything else is a refusal page that says which check failed. The state
//! cookie (state, nonce, PKCE verifier) is `HttpOnly`, `SameSite=Lax` (the
//! provider's redirect back is a cross-site top-level navigation), scoped
//! to `/ui/oidc`, and cleared by the callback.

use askama::Template as _;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use openidconnect::core::CoreAuthenticationFlow;
use openidconnect::{
    AuthorizationCode, CsrfToken, Nonce, OAuth2TokenResponse as _, PkceCodeChallenge,
    PkceCodeVerifier, Scope as OidcScope,
};
use serde::{Deserialize, Serialize};
use skilldeck_registry::{Principal, SignIn};

use crate::error::{UiError, error_page};
use crate::keys::Purpose;
use crate::oidc::provider::{Claims, Sso, chain};
use crate::oidc::rules::{Identity, scopes_for};

use crate::state::UiState;
use crate::views::{Chrome, SsoDonePage};

/// The state cookie's name.
pub const STATE_COOKIE: &str = "skilldeck_ui_oidc";
/// The path it is sent for.
pub const STATE_COOKIE_PATH: &str = "/ui/oidc";
/// How long a sign-in at the provider may take.
pub const STATE_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(10 * 60);
/// Longest state cookie accepted.
const MAX_STATE_COOKIE_CHARS: usize = 2048;
/// Longest error text from the provider shown.
const MAX_PROVIDER_ERROR_CHARS: usize = 300;

/// What the state cookie carries.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FlowState {
    /// `state` sent to the provider.
    pub state: String,
    /// `nonce` sent to the provider.
    pub nonce: String,
    /// The PKCE code verifier.
    pub verifier: String,
    /// When the flow started (Unix seconds).
    pub issued: u64,
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The cookie value of `flow`: its JSON, base64url, a dot, its MAC.
pub fn seal(key: crate::keys::Key<'_>, flow: &FlowState) -> String {
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(flow).unwrap_or_default());
    let mac = key.mac(Purpose::OidcState, &payload);
    format!("{payload}.{mac}")
}

/// The flow of a cookie value: ours (MAC), well-formed and fresh.
pub fn open(key: crate::keys::Key<'_>, cookie: &str) -> Result<FlowState, &'static str> {
    if cookie.len() > MAX_STATE_COOKIE_CHARS {
        return Err("the sign-in state cookie is malformed");
    }
    let (payload, mac) = cookie
        .split_once('.')
        .ok_or("the sign-in state cookie is malformed")?;
    if !key.verify(Purpose::OidcState, payload, mac) {
        return Err("the sign-in state cookie was not made by this registry");
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| "the sign-in state cookie is malformed")?;
    let flow: FlowState =
        serde_json::from_slice(&bytes).map_err(|_| "the sign-in state cookie is malformed")?;
    let now = unix_now();
    if now.saturating_sub(flow.issued) >= STATE_MAX_AGE.as_secs()
        || flow.issued > now.saturating_add(60)
    {
        return Err("the sign-in took too long");
    }
    Ok(flow)
}

fn state_cookie(value: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{STATE_COOKIE}={value}; Path={STATE_COOKIE_PATH}; Max-Age={}; HttpOnly; SameSite=Lax{secure}",
        STATE_MAX_AGE.as_secs()
    )
}

fn cleared_state_cookie(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{STATE_COOKIE}=; Path={STATE_COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Lax{secure}")
}

fn sso_of(state: &UiState) -> Result<&Sso, Box<Response>> {
    state.sso.as_deref().ok_or_else(|| {
        Box::new(error_page(
            StatusCode::NOT_FOUND,
            "Not found",
            "Single sign-on is not configured on this registry.",
        ))
    })
}

/// A refusal of the callback: the page says which check failed, and the
/// state cookie is cleared (a new sign-in starts a new flow).
fn refuse(state: &UiState, headers: &HeaderMap, status: StatusCode, why: &str) -> Response {
    tracing::warn!(reason = %why, "single sign-on refused");
    let mut response = error_page(status, "Sign-in refused", why);
    if let Ok(v) = HeaderValue::from_str(&cleared_state_cookie(state.secure(headers))) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// `GET /ui/oidc/start`: to the provider.
pub async fn start(State(state): State<UiState>, headers: HeaderMap) -> Response {
    let sso = match sso_of(&state) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let client = match sso.client().await {
        Ok(c) => c,
        Err(why) => {
            return error_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Single sign-on unavailable",
                &format!("Single sign-on is unavailable: {why}."),
            );
        }
    };
    let key = match state.key.get().await {
        Ok(k) => k,
        Err(e) => return e.into_response(),
    };
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .set_pkce_challenge(challenge);
    for scope in &sso.settings.scopes {
        request = request.add_scope(OidcScope::new(scope.clone()));
    }
    let (url, csrf, nonce) = request.url();
    let flow = FlowState {
        state: csrf.secret().clone(),
        nonce: nonce.secret().clone(),
        verifier: verifier.secret().clone(),
        issued: unix_now(),
    };
    let mut response = Redirect::to(url.as_str()).into_response();
    match HeaderValue::from_str(&state_cookie(&seal(key, &flow), state.secure(&headers))) {
        Ok(v) => {
            response.headers_mut().insert(header::SET_COOKIE, v);
            response
        }
        Err(_) => {
            UiError::BadInput("the sign-in state is not header text".to_owned()).into_response()
        }
    }
}

/// The callback's query.
#[derive(Debug, Deserialize)]
pub struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
    /// RFC 9207: the issuer of the answer (checked when present: a
    /// mix-up with another provider is refused).
    iss: Option<String>,
}

fn short(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(MAX_PROVIDER_ERROR_CHARS)
        .collect()
}

/// The identity the rules see, from verified claims.
pub fn identity(claims: &Claims, groups_claim: &str) -> Identity {
    Identity {
        email: claims.email().map(|e| e.as_str().to_owned()),
        email_verified: claims.email_verified() == Some(true),
        groups: groups_of(claims.additional_claims().0.get(groups_claim)),
    }
}

/// A groups claim: an array of strings (other items ignored) or one string.
fn groups_of(claim: Option<&serde_json::Value>) -> Vec<String> {
    match claim {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(serde_json::Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    }
}

/// `GET /ui/oidc/callback`: every check, then a session.
pub async fn callback(
    State(state): State<UiState>,
    headers: HeaderMap,
    Query(q): Query<Callback>,
) -> Response {
    let sso = match sso_of(&state) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let key = match state.key.get().await {
        Ok(k) => k,
        Err(e) => return e.into_response(),
    };
    // 1. Our cookie, fresh, and the same state.
    let cookie = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|c| crate::session::cookie_value(c, STATE_COOKIE));
    let Some(cookie) = cookie else {
        return refuse(
            &state,
            &headers,
            StatusCode::BAD_REQUEST,
            "This sign-in was not started in this browser (no sign-in state cookie), or it took too long. Start again from the sign-in page.",
        );
    };
    let flow = match open(key, cookie) {
        Ok(f) => f,
        Err(why) => {
            return refuse(
                &state,
                &headers,
                StatusCode::BAD_REQUEST,
                &format!("{why}. Start again from the sign-in page."),
            );
        }
    };
    let given_state = q.state.as_deref().unwrap_or_default();
    if given_state.is_empty() || !crate::secret::secrets_equal(given_state, &flow.state) {
        return refuse(
            &state,
            &headers,
            StatusCode::BAD_REQUEST,
            "The provider's answer does not belong to the sign-in this browser started (state mismatch). Start again from the sign-in page.",
        );
    }
    if let Some(iss) = q.iss.as_deref()
        && iss != sso.settings.issuer.as_str()
    {
        return refuse(
            &state,
            &headers,
            StatusCode::BAD_REQUEST,
            &format!(
                "The answer names another issuer ({}) than this registry's provider.",
                short(iss)
            ),
        );
    }
    // 2. The provider's own refusal.
    if let Some(error) = &q.error {
        let detail = q
            .error_description
            .as_deref()
            .map(|d| format!(" ({})", short(d)))
            .unwrap_or_default();
        return refuse(
            &state,
            &headers,
            StatusCode::UNAUTHORIZED,
            &format!(
                "The identity provider refused the sign-in: {}{detail}.",
                short(error)
            ),
        );
    }
    let Some(code) = q.code.filter(|c| !c.is_empty()) else {
        return refuse(
            &state,
            &headers,
            StatusCode::BAD_REQUEST,
            "The provider's answer carries no authorization code.",
        );
    };
    let client = match sso.client().await {
        Ok(c) => c,
        Err(why) => {
            return refuse(
                &state,
                &headers,
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("Single sign-on is unavailable: {why}."),
            );
        }
    };
    // 3. The code, with the PKCE verifier.
    let http = crate::oidc::provider::ProviderHttp(sso);
    let exchange = match client.exchange_code(AuthorizationCode::new(code)) {
        Ok(e) => e,
        Err(e) => {
            return refuse(
                &state,
                &headers,
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("Single sign-on is unavailable: {}.", chain(&e)),
            );
        }
    };
    let tokens = match exchange
        .set_pkce_verifier(PkceCodeVerifier::new(flow.verifier.clone()))
        .request_async(&http)
        .await
    {
        Ok(t) => t,
        Err(e) => {
            return refuse(
                &state,
                &headers,
                StatusCode::UNAUTHORIZED,
                &format!(
                    "The identity provider did not accept the authorization code: {}.",
                    short(&chain(&e))
                ),
            );
        }
    };
    let Some(id_token) = openidconnect::TokenResponse::id_token(&tokens) else {
        return refuse(
            &state,
            &headers,
            StatusCode::UNAUTHORIZED,
            "The identity provider returned no ID token (is the `openid` scope allowed for this client?).",
        );
    };
    // 4. Signature, iss, aud, exp, nonce.
    let nonce = Nonce::new(flow.nonce.clone());
    let verified = match id_token.claims(&client.id_token_verifier(), &nonce) {
        Ok(c) => Ok(c.clone()),
        Err(openidconnect::ClaimsVerificationError::SignatureVerification(_)) => {
            // Perhaps a rotated key: fetch the key set again, once.
            match sso.refresh().await {
                Ok(fresh) => id_token.claims(&fresh.id_token_verifier(), &nonce).cloned(),
                Err(why) => {
                    return refuse(
                        &state,
                        &headers,
                        StatusCode::SERVICE_UNAVAILABLE,
                        &format!("Single sign-on is unavailable: {why}."),
                    );
                }
            }
        }
        Err(e) => Err(e),
    };
    let claims = match verified {
        Ok(c) => c,
        Err(e) => {
            return refuse(
                &state,
                &headers,
                StatusCode::UNAUTHORIZED,
                &format!(
                    "The identity provider's ID token failed verification: {}.",
                    short(&chain(&e))
                ),
            );
        }
    };
    let subject = claims.subject().as_str().to_owned();
    let mut who = identity(&claims, &sso.settings.groups_claim);
    // Many providers put email and groups only in the UserInfo answer
    // (an ID token of the code flow need not carry them): ask it for what
    // the ID token lacks, for the same subject.
    let has_groups = claims
        .additional_claims()
        .0
        .contains_key(&sso.settings.groups_claim);
    if (who.email.is_none() || !has_groups) && client.user_info_url().is_some() {
        let request = match client.user_info(
            tokens.access_token().clone(),
            Some(claims.subject().clone()),
        ) {
            Ok(r) => r,
            Err(e) => {
                return refuse(
                    &state,
                    &headers,
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("Single sign-on is unavailable: {}.", chain(&e)),
                );
            }
        };
        let info: openidconnect::UserInfoClaims<
            crate::oidc::provider::OtherClaims,
            openidconnect::core::CoreGenderClaim,
        > = match request.request_async(&http).await {
            Ok(i) => i,
            Err(e) => {
                return refuse(
                    &state,
                    &headers,
                    StatusCode::BAD_GATEWAY,
                    &format!(
                        "The identity provider's UserInfo answer could not be used: {}.",
                        short(&chain(&e))
                    ),
                );
            }
        };
        if who.email.is_none() {
            who.email = info.email().map(|e| e.as_str().to_owned());
            who.email_verified = info.email_verified() == Some(true);
        }
        if !has_groups {
            who.groups = groups_of(info.additional_claims().0.get(&sso.settings.groups_claim));
        }
    }
    // 5. The rules.
    let scopes = scopes_for(
        &sso.settings.rules,
        &who,
        sso.settings.require_verified_email,
    );
    let shown = who.email.clone().unwrap_or_else(|| subject.clone());
    if scopes.is_empty() {
        let groups = if who.groups.is_empty() {
            "no groups".to_owned()
        } else {
            format!("groups {}", who.groups.join(", "))
        };
        let unverified =
            if who.email.is_some() && !who.email_verified && sso.settings.require_verified_email {
                " (the provider did not verify the email, so email rules do not apply)"
            } else {
                ""
            };
        return refuse(
            &state,
            &headers,
            StatusCode::FORBIDDEN,
            &format!(
                "You signed in as {} ({groups}){unverified}, but no single sign-on rule of this registry gives that account access. Ask a registry administrator to add a rule for your group or email.",
                short(&shown)
            ),
        );
    }
    let name = who
        .email
        .clone()
        .or_else(|| claims.preferred_username().map(|u| u.as_str().to_owned()))
        .unwrap_or_else(|| subject.clone());
    let principal = Principal {
        token_id: format!("oidc:{subject}"),
        name: short(&name),
        scopes,
    };
    if let Err(why) = crate::pages::auth::may_use_ui(&principal) {
        return refuse(&state, &headers, StatusCode::FORBIDDEN, why);
    }
    if let Err(e) = skilldeck_registry::RegistryError::check_text("subject", &principal.token_id)
        .and_then(|()| skilldeck_registry::RegistryError::check_text("name", &principal.name))
    {
        return refuse(
            &state,
            &headers,
            StatusCode::BAD_REQUEST,
            &format!("The provider's subject or name cannot be stored: {e}."),
        );
    }
    if let Err(e) = state
        .registry
        .record_sso_sign_in(
            &principal,
            sso.settings.issuer.as_str(),
            &subject,
            who.email.as_deref(),
        )
        .await
    {
        return UiError::from(e).into_response();
    }
    let session = match state
        .sessions
        .create(
            principal,
            SignIn::Oidc {
                subject,
                email: who.email,
            },
        )
        .await
    {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    // A page, not a redirect: the session cookie is SameSite=Strict, and
    // a redirect would still be part of the provider's cross-site
    // navigation (the browser would not send it). The page moves on by
    // itself (meta refresh, no script) and has a link.
    let page = SsoDonePage {
        chrome: Chrome::new(String::new(), None, "", None),
        next: "/ui/skills".to_owned(),
    };
    let html = match page.render() {
        Ok(h) => h,
        Err(e) => return UiError::from(e).into_response(),
    };
    let mut response = Html(html).into_response();
    let secure = state.secure(&headers);
    match state.cookie_for(&headers, &session.id) {
        Ok(v) => {
            response.headers_mut().insert(header::SET_COOKIE, v);
        }
        Err(e) => return e.into_response(),
    }
    if let Ok(v) = HeaderValue::from_str(&cleared_state_cookie(secure)) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Key;

    fn flow(issued: u64) -> FlowState {
        FlowState {
            state: "s".into(),
            nonce: "n".into(),
            verifier: "v".into(),
            issued,
        }
    }

    #[test]
    fn a_state_cookie_opens_only_with_its_key_unchanged_and_fresh() {
        let key = Key::of(b"0123456789abcdef0123456789abcdef");
        let sealed = seal(key, &flow(unix_now()));
        assert_eq!(open(key, &sealed).unwrap(), flow(flow_issued(&sealed, key)));
        let other = Key::of(b"another key of thirty-two bytes!");
        assert!(open(other, &sealed).is_err(), "another registry's key");
        // A cookie whose state was swapped keeps the old MAC: refused.
        let forged_payload = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&FlowState {
                state: "attacker".into(),
                ..flow(unix_now())
            })
            .unwrap(),
        );
        let mac = sealed.split_once('.').unwrap().1;
        assert!(open(key, &format!("{forged_payload}.{mac}")).is_err());
        let stale = seal(key, &flow(unix_now() - STATE_MAX_AGE.as_secs()));
        assert_eq!(open(key, &stale), Err("the sign-in took too long"));
        assert!(open(key, "nodot").is_err());
    }

    fn flow_issued(sealed: &str, key: Key<'_>) -> u64 {
        open(key, sealed).unwrap().issued
    }

    #[test]
    fn the_state_cookie_is_httponly_lax_and_narrow() {
        let c = state_cookie("x", false);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Lax"));
        assert!(c.contains("Path=/ui/oidc"));
        assert!(state_cookie("x", true).ends_with("; Secure"));
        assert!(cleared_state_cookie(false).contains("Max-Age=0"));
    }
}
