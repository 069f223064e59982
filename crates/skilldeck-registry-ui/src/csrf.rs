//! The CSRF check, in one middleware in front of every route of the UI:
//! any request that is not `GET`, `HEAD` or `OPTIONS` must carry its
//! session's CSRF token, in the `x-csrf-token` header (htmx requests) or
//! in the form field `csrf` (url-encoded or multipart forms), and must not
//! come from another site (`Sec-Fetch-Site`, `Origin`). Anything else is
//! refused with 403 before a handler runs, so no handler can forget it.
//!
//! The token's owner is found from the request head before any body is
//! read: a signed-in session, or (for `POST /ui/signin` only, an
//! url-encoded form of at most [`MAX_FORM_BYTES`]) the sign-in form's
//! signed cookie. A request with neither is refused without reading its
//! body, so an anonymous client cannot make the server read an upload.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequest as _, Multipart, Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use serde::Deserialize;

use crate::error::UiError;
use crate::keys::UiKey;
use crate::limits::MAX_FORM_BYTES;
use crate::secret::secrets_equal;
use crate::session::{SessionStore, session_id_from_cookies};
use crate::signin::{cookie_is_fresh, signin_cookie_from};

/// The form field carrying the CSRF token.
pub const CSRF_FIELD: &str = "csrf";
/// The header carrying the CSRF token (htmx sends it from `hx-headers`).
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The middleware's state: the sessions, and the largest multipart form
/// it reads to find the token.
#[derive(Clone)]
pub struct CsrfGuard {
    /// The sessions whose tokens are checked.
    pub sessions: Arc<SessionStore>,
    /// The shared key (the sign-in form's cookie stands in for a session
    /// on `POST /ui/signin`).
    pub key: Arc<UiKey>,
    /// The largest multipart body read (the upload form).
    pub max_multipart_bytes: usize,
}

#[derive(Deserialize)]
struct CsrfOnly {
    #[serde(default)]
    csrf: String,
}

/// The middleware: refuses (403) a state-changing request without the
/// right token; passes the request on unchanged otherwise (a form body
/// read to find the token is put back).
pub async fn require_csrf(
    State(guard): State<CsrfGuard>,
    request: Request,
    next: Next,
) -> Response {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return next.run(request).await;
    }
    match check(&guard, request).await {
        Ok(request) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

/// Whose token a request must carry.
enum Expected {
    /// A signed-in session's CSRF token.
    Session(String),
    /// The sign-in form's token for this cookie value.
    SignInForm(String),
}

/// The path of the sign-in form's POST (the only one without a session).
const SIGNIN_PATH: &str = "/ui/signin";

async fn check(guard: &CsrfGuard, request: Request) -> Result<Request, UiError> {
    refuse_cross_site(request.headers())?;
    let cookies = request
        .headers()
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    // A database failure refuses the request (fails closed).
    let session = match session_id_from_cookies(&cookies) {
        Some(id) => guard.sessions.csrf_of(id).await?,
        None => None,
    };
    let (expected, key) = match session {
        Some(csrf) => (Expected::Session(csrf), None),
        None if request.uri().path() == SIGNIN_PATH => {
            let cookie = signin_cookie_from(&cookies).ok_or(UiError::Csrf(
                "the sign-in form has expired (load it again)",
            ))?;
            if !cookie_is_fresh(cookie) {
                return Err(UiError::Csrf(
                    "the sign-in form has expired (load it again)",
                ));
            }
            (
                Expected::SignInForm(cookie.to_owned()),
                Some(guard.key.get().await?),
            )
        }
        None => return Err(UiError::Csrf("no live session (sign in again)")),
    };
    let matches = |given: &str| match (&expected, key) {
        (Expected::Session(csrf), _) => secrets_equal(given, csrf),
        (Expected::SignInForm(cookie), Some(key)) => crate::signin::verify(key, cookie, given),
        (Expected::SignInForm(_), None) => false,
    };
    if let Some(given) = request.headers().get(CSRF_HEADER) {
        let given = given.to_str().unwrap_or_default();
        return if matches(given) {
            Ok(request)
        } else {
            Err(UiError::Csrf("the CSRF token is wrong"))
        };
    }
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let (limit, multipart) = match (essence.as_str(), &expected) {
        ("application/x-www-form-urlencoded", _) => (MAX_FORM_BYTES, false),
        // Uploads: a signed-in session only.
        ("multipart/form-data", Expected::Session(_)) => (guard.max_multipart_bytes, true),
        _ => return Err(UiError::Csrf("the form carries no CSRF token")),
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(UiError::TooLarge(limit));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| UiError::TooLarge(limit))?;
    let copy = || {
        Request::builder()
            .method(Method::POST)
            .header(header::CONTENT_TYPE, content_type.as_str())
            .body(Body::from(bytes.clone()))
            .map_err(|_| UiError::Csrf("the form could not be read"))
    };
    let given = if multipart {
        multipart_token(copy()?).await
    } else {
        axum::Form::<CsrfOnly>::from_request(copy()?, &())
            .await
            .map(|f| f.0.csrf)
            .unwrap_or_default()
    };
    if given.is_empty() {
        return Err(UiError::Csrf("the form carries no CSRF token"));
    }
    if !matches(&given) {
        return Err(UiError::Csrf("the CSRF token is wrong"));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

async fn multipart_token(request: Request) -> String {
    let Ok(mut multipart) = Multipart::from_request(request, &()).await else {
        return String::new();
    };
    while let Ok(Some(field)) = multipart.next_field().await {
        if field.name() == Some(CSRF_FIELD) {
            return field.text().await.unwrap_or_default();
        }
    }
    String::new()
}

/// Refuses a request a browser marks as coming from another site, or
/// whose `Origin` is not this host.
fn refuse_cross_site(headers: &HeaderMap) -> Result<(), UiError> {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && !matches!(site, "same-origin" | "none")
    {
        return Err(UiError::Csrf("the request came from another site"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let origin_host = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .unwrap_or_default();
        if host.is_empty() || !origin_host.eq_ignore_ascii_case(host) {
            return Err(UiError::Csrf("the request's Origin is not this site"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::http::StatusCode;
    use axum::routing::post;
    use tower::ServiceExt as _;

    struct App {
        router: Router,
        sessions: Arc<SessionStore>,
        id: String,
        csrf: String,
        _dir: tempfile::TempDir,
    }

    fn user() -> skilldeck_registry::Principal {
        skilldeck_registry::Principal {
            token_id: "tok_u".to_owned(),
            name: "u".to_owned(),
            scopes: vec![skilldeck_registry::Scope::Admin],
        }
    }

    async fn app() -> App {
        let dir = tempfile::tempdir().unwrap();
        let registry = skilldeck_registry::Registry::open(skilldeck_registry::RegistryConfig {
            database_url: format!(
                "sqlite://{}?mode=rwc",
                dir.path().join("registry.db").display()
            ),
            store_url: format!("file://{}", dir.path().join("blobs").display()),
            staging_dir: dir.path().join("staging"),
            limits: Default::default(),
            trust: Default::default(),
            report: Default::default(),
        })
        .await
        .unwrap();
        let key = Arc::new(UiKey::new(registry.clone()));
        let sessions = Arc::new(SessionStore::new(registry, key.clone()));
        let s = sessions
            .create(user(), skilldeck_registry::SignIn::Token)
            .await
            .unwrap();
        let router = Router::new()
            .route(
                "/ui/x",
                post(|body: String| async move { format!("handled:{}", body.len()) }),
            )
            .layer(axum::middleware::from_fn_with_state(
                CsrfGuard {
                    sessions: sessions.clone(),
                    key,
                    max_multipart_bytes: 1 << 20,
                },
                require_csrf,
            ));
        App {
            router,
            sessions,
            id: s.id,
            csrf: s.csrf,
            _dir: dir,
        }
    }

    fn form(cookie: &str, body: String) -> Request {
        Request::builder()
            .method(Method::POST)
            .uri("/ui/x")
            .header(header::HOST, "127.0.0.1:7878")
            .header(header::COOKIE, format!("skilldeck_ui={cookie}"))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap()
    }

    async fn status_and_body(router: Router, req: Request) -> (StatusCode, String) {
        let res = router.oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn a_form_with_its_session_token_passes_and_keeps_its_body() {
        let App {
            router,
            id,
            csrf,
            _dir,
            ..
        } = app().await;
        let body = format!("name=a&csrf={csrf}");
        let len = body.len();
        let (status, text) = status_and_body(router, form(&id, body)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert_eq!(text, format!("handled:{len}"));
    }

    #[tokio::test]
    async fn a_form_without_a_token_is_refused_with_403() {
        let App {
            router, id, _dir, ..
        } = app().await;
        let (status, text) = status_and_body(router, form(&id, "name=a".into())).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(!text.contains("handled"));
    }

    #[tokio::test]
    async fn a_form_with_another_sessions_token_is_refused() {
        let App {
            router,
            sessions,
            id,
            _dir,
            ..
        } = app().await;
        let other = sessions
            .create(user(), skilldeck_registry::SignIn::Token)
            .await
            .unwrap();
        let (status, _) = status_and_body(router, form(&id, format!("csrf={}", other.csrf))).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn a_post_without_a_session_is_refused() {
        let App {
            router, csrf, _dir, ..
        } = app().await;
        let (status, _) = status_and_body(router, form("nope", format!("csrf={csrf}"))).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn the_header_token_works_for_htmx_and_a_wrong_one_is_refused() {
        let App {
            router,
            id,
            csrf,
            _dir,
            ..
        } = app().await;
        let mut ok = form(&id, "x=1".into());
        ok.headers_mut().insert(CSRF_HEADER, csrf.parse().unwrap());
        assert_eq!(status_and_body(router.clone(), ok).await.0, StatusCode::OK);
        let mut bad = form(&id, format!("csrf={csrf}"));
        bad.headers_mut()
            .insert(CSRF_HEADER, "wrong".parse().unwrap());
        assert_eq!(status_and_body(router, bad).await.0, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn a_multipart_form_carries_its_token_as_a_field() {
        let App {
            router,
            id,
            csrf,
            _dir,
            ..
        } = app().await;
        let multipart = |token: &str| {
            let body = format!(
                "--XB\r\nContent-Disposition: form-data; name=\"package\"; filename=\"p.tgz\"\r\nContent-Type: application/gzip\r\n\r\nDATA\r\n--XB\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{token}\r\n--XB--\r\n"
            );
            let mut req = form(&id, body);
            req.headers_mut().insert(
                header::CONTENT_TYPE,
                "multipart/form-data; boundary=XB".parse().unwrap(),
            );
            req
        };
        assert_eq!(
            status_and_body(router.clone(), multipart(&csrf)).await.0,
            StatusCode::OK
        );
        assert_eq!(
            status_and_body(router, multipart("forged")).await.0,
            StatusCode::FORBIDDEN
        );
    }

    #[tokio::test]
    async fn a_cross_site_post_is_refused_even_with_the_token() {
        let App {
            router,
            id,
            csrf,
            _dir,
            ..
        } = app().await;
        let mut req = form(&id, format!("csrf={csrf}"));
        req.headers_mut()
            .insert("sec-fetch-site", "cross-site".parse().unwrap());
        assert_eq!(
            status_and_body(router.clone(), req).await.0,
            StatusCode::FORBIDDEN
        );
        let mut req = form(&id, format!("csrf={csrf}"));
        req.headers_mut()
            .insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        assert_eq!(
            status_and_body(router.clone(), req).await.0,
            StatusCode::FORBIDDEN
        );
        let mut same = form(&id, format!("csrf={csrf}"));
        same.headers_mut()
            .insert(header::ORIGIN, "http://127.0.0.1:7878".parse().unwrap());
        assert_eq!(status_and_body(router, same).await.0, StatusCode::OK);
    }

    #[tokio::test]
    async fn other_content_types_are_refused() {
        let App {
            router,
            id,
            csrf,
            _dir,
            ..
        } = app().await;
        let mut req = form(&id, format!("{{\"csrf\":\"{csrf}\"}}"));
        req.headers_mut()
            .insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
        assert_eq!(status_and_body(router, req).await.0, StatusCode::FORBIDDEN);
    }
}
