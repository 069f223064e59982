//! # skilldeck-registry-ui
//!
//! The registry's web UI: pages rendered on the server under `/ui`
//! (askama templates), usable without JavaScript, with htmx (vendored,
//! 2.0.11) for progressive enhancement only. Every page calls the
//! registry's service layer in-process (`skilldeck_registry::Registry`),
//! so authorization is the service's, exactly as for the HTTP API.
//!
//! - `session`: server-side sessions (signed-in users only) behind an
//!   `HttpOnly`, `SameSite=Strict` cookie, stored in the registry's
//!   database so every replica shares them; `keys`: the signing key the
//!   replicas share (through the database); `signin`: the sign-in form's
//!   signed cookie (no session for anonymous visitors); `csrf`: the one
//!   CSRF check in front of every state-changing request, before any body
//!   is read; `headers`: CSP and friends.
//! - `oidc`: single sign-on with an OpenID provider (authorization code,
//!   PKCE, state, nonce, discovery and JWKS; claims mapped to scopes).
//! - `markdown`: SKILL.md rendered and always sanitised.
//! - `views`: the templates; `assets`: CSS, htmx, icon with content
//!   hashes in their paths.
//!
//! The public API is the router ([`ui_router`], [`ui_router_with`]) and
//! its configuration ([`UiConfig`], [`CookieSecure`], [`OidcSettings`]);
//! the other modules are private.

#![deny(missing_docs)]

mod assets;
mod csrf;
mod error;
mod headers;
mod keys;
mod limits;
mod markdown;
mod oidc;
mod pages;
mod secret;
mod session;
mod signin;
mod state;
mod try_it;
mod views;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use skilldeck_registry::Registry;

use crate::assets::serve_static;
use crate::csrf::{CsrfGuard, require_csrf};
use crate::error::error_page;
use crate::headers::security_headers;
use crate::keys::UiKey;
use crate::limits::UPLOAD_FORM_OVERHEAD_BYTES;
pub use crate::oidc::{OidcConfigError, OidcSettings};
use crate::pages::{admin, agents, auth, files, selection, skills, sso, upload};
use crate::session::SessionStore;
use crate::state::UiState;
pub use crate::state::{CookieSecure, UiConfig};

/// The web UI under `/ui` (and its assets under `/ui/static`), with the
/// default configuration (the session cookie is `Secure` when a reverse
/// proxy says the request came over https). Merge it into the server's
/// router: its layers (CSRF, security headers, body limit) apply to its
/// own routes only.
pub fn ui_router(registry: Registry) -> Router {
    ui_router_with(registry, UiConfig::default())
}

/// [`ui_router`] with an explicit configuration.
pub fn ui_router_with(registry: Registry, config: UiConfig) -> Router {
    let max_upload = registry
        .limits()
        .max_publish_bytes
        .saturating_add(UPLOAD_FORM_OVERHEAD_BYTES);
    // The key and the sessions live in the registry's database: every
    // replica shares them. Without the database or the OS generator there
    // is no key: sign-in and every form are then refused (fails closed).
    let key = Arc::new(UiKey::new(registry.clone()));
    let sessions = Arc::new(SessionStore::new(registry.clone(), key.clone()));
    let guard = CsrfGuard {
        sessions: sessions.clone(),
        key: key.clone(),
        max_multipart_bytes: max_upload,
    };
    let sso = config.oidc.clone().map(|s| Arc::new(oidc::Sso::new(s)));
    let state = UiState {
        registry,
        sessions,
        key,
        config: Arc::new(config),
        sso,
    };
    Router::new()
        .route("/ui", get(auth::home))
        .route("/ui/", get(auth::home))
        .route("/ui/signin", get(auth::signin_form).post(auth::signin))
        .route("/ui/signout", post(auth::signout))
        .route("/ui/oidc/start", get(sso::start))
        .route("/ui/oidc/callback", get(sso::callback))
        .route("/ui/skills", get(skills::list))
        .route("/ui/skills/{namespace}/{name}", get(skills::show))
        .route(
            "/ui/skills/{namespace}/{name}/labels",
            post(skills::move_label),
        )
        .route(
            "/ui/skills/{namespace}/{name}/versions/{version}",
            get(skills::version),
        )
        .route(
            "/ui/skills/{namespace}/{name}/versions/{version}/test-run",
            post(skills::test_run),
        )
        .route(
            "/ui/skills/{namespace}/{name}/versions/{version}/files/{*path}",
            get(files::view),
        )
        .route(
            "/ui/skills/{namespace}/{name}/versions/{version}/raw/{*path}",
            get(files::raw),
        )
        .route(
            "/ui/skills/{namespace}/{name}/versions/{version}/markers",
            post(skills::set_marker),
        )
        .route("/ui/skills/{namespace}/{name}/assign", post(skills::assign))
        .route("/ui/tokens", get(admin::tokens).post(admin::create_token))
        .route("/ui/tokens/{id}/revoke", post(admin::revoke_token))
        .route("/ui/audit", get(admin::audit))
        .route("/ui/reviews", get(skills::reviews))
        .route("/ui/upload", get(upload::form).post(upload::upload))
        .route("/ui/agents", get(agents::list).post(agents::create))
        .route("/ui/agents/new", get(agents::new_form))
        .route(
            "/ui/agents/{id}/edit",
            get(agents::edit_form).post(agents::update),
        )
        .route("/ui/agents/{id}/delete", post(agents::delete))
        .route("/ui/agents/{id}/skills", get(selection::page))
        .route("/ui/agents/{id}/preview", get(selection::preview))
        .route(
            "/ui/agents/{id}/skills/{namespace}/{name}",
            post(selection::save),
        )
        .route(
            "/ui/agents/{id}/skills/{namespace}/{name}/remove",
            post(selection::remove),
        )
        .route("/ui/static/{file}", get(serve_static))
        .route("/ui/{*rest}", get(not_found).post(not_found))
        .layer(axum::middleware::from_fn_with_state(guard, require_csrf))
        .layer(DefaultBodyLimit::max(max_upload))
        .layer(axum::middleware::from_fn(security_headers))
        .with_state(state)
}

async fn not_found() -> Response {
    error_page(
        StatusCode::NOT_FOUND,
        "Not found",
        "There is no page at this address.",
    )
}
