//! Single sign-on's callback, attacked. An identity provider on a loopback
//! socket (discovery, JWKS with an Ed25519 key, a token endpoint that
//! checks the client secret and the PKCE verifier) hands out exactly the
//! ID token each test signs, so each test can forge one thing: a wrong
//! state, a wrong nonce, an expired token, a token signed by another key,
//! an unsigned one, another audience or issuer. Each is refused with a page
//! that says why, and no session is made. The end-to-end sign-in against
//! a real provider (npm `oidc-provider`) is `tests/ui/test_oidc.py`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::Signer as _;
use serde_json::{Value, json};
use sha2::Digest as _;
use skilldeck::deck::{OidcConfig, OidcRuleConfig};
use skilldeck_registry::{Registry, RegistryConfig};
use skilldeck_registry_ui::{OidcSettings, UiConfig, ui_router_with};
use tower::ServiceExt as _;

use crate::common::get;

const CLIENT_ID: &str = "skilldeck-registry";
const CLIENT_SECRET: &str = "s3cret-of-the-client";

/// What the provider hands out for a code.
#[derive(Clone)]
struct Grant {
    challenge: String,
    id_token: String,
}

#[derive(Default)]
struct IdpState {
    issuer: String,
    jwks: Value,
    grants: HashMap<String, Grant>,
    /// Codes redeemed (a refused callback must redeem none).
    redeemed: Vec<String>,
}

type Shared = Arc<Mutex<IdpState>>;

async fn discovery(State(s): State<Shared>) -> impl IntoResponse {
    let issuer = s.lock().unwrap().issuer.clone();
    axum::Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/auth"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["EdDSA"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
    }))
}

async fn jwks(State(s): State<Shared>) -> impl IntoResponse {
    axum::Json(s.lock().unwrap().jwks.clone())
}

async fn token(
    State(s): State<Shared>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        != Some(expected.as_str())
    {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let code = form.get("code").cloned().unwrap_or_default();
    let mut st = s.lock().unwrap();
    let Some(grant) = st.grants.remove(&code) else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    };
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    let computed = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
    if computed != grant.challenge {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(
                json!({"error": "invalid_grant", "error_description": "PKCE verification failed"}),
            ),
        )
            .into_response();
    }
    st.redeemed.push(code);
    axum::Json(json!({
        "access_token": "at-1",
        "token_type": "Bearer",
        "expires_in": 300,
        "id_token": grant.id_token,
    }))
    .into_response()
}

struct Idp {
    issuer: String,
    state: Shared,
    key: ed25519_dalek::SigningKey,
}

fn jwk(key: &ed25519_dalek::SigningKey, kid: &str) -> Value {
    json!({
        "kty": "OKP",
        "crv": "Ed25519",
        "alg": "EdDSA",
        "use": "sig",
        "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes()),
    })
}

fn random_key() -> ed25519_dalek::SigningKey {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap();
    ed25519_dalek::SigningKey::from_bytes(&seed)
}

async fn idp_with(keys: impl FnOnce(&ed25519_dalek::SigningKey) -> Value) -> Idp {
    let key = random_key();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let state: Shared = Arc::new(Mutex::new(IdpState {
        issuer: issuer.clone(),
        jwks: keys(&key),
        ..IdpState::default()
    }));
    let app = Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(discovery),
        )
        .route("/jwks", axum::routing::get(jwks))
        .route("/token", post(token))
        .with_state(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Idp { issuer, state, key }
}

async fn idp() -> Idp {
    idp_with(|k| json!({"keys": [jwk(k, "k1")]})).await
}

/// A JWT of `claims` signed by `key` (EdDSA, kid k1).
fn sign(key: &ed25519_dalek::SigningKey, claims: &Value) -> String {
    let header =
        URL_SAFE_NO_PAD.encode(json!({"alg": "EdDSA", "kid": "k1", "typ": "JWT"}).to_string());
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let input = format!("{header}.{payload}");
    let sig = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

struct Ui {
    router: Router,
    registry: Registry,
    _dir: tempfile::TempDir,
}

fn rule(group: Option<&str>, email: Option<&str>, grant: &[&str]) -> OidcRuleConfig {
    OidcRuleConfig {
        group: group.map(str::to_owned),
        email: email.map(str::to_owned),
        grant: grant.iter().map(|s| (*s).to_owned()).collect(),
    }
}

async fn ui(issuer: &str) -> Ui {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("oidc-secret");
    std::fs::write(&secret, format!("{CLIENT_SECRET}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let settings = OidcSettings::from_config(
        &OidcConfig {
            issuer: issuer.to_owned(),
            client_id: CLIENT_ID.to_owned(),
            client_secret_file: "oidc-secret".into(),
            redirect_url: "http://127.0.0.1:7878/ui/oidc/callback".to_owned(),
            display_name: Some("Acme SSO".to_owned()),
            scopes: Some(vec!["email".to_owned(), "groups".to_owned()]),
            groups_claim: None,
            require_verified_email: None,
            rules: vec![
                rule(Some("registry-admins"), None, &["admin"]),
                rule(None, Some("*@acme.example"), &["publish:acme"]),
            ],
        },
        dir.path(),
    )
    .unwrap();
    let registry = Registry::open(RegistryConfig {
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
    let router = ui_router_with(
        registry.clone(),
        UiConfig {
            oidc: Some(settings),
            ..UiConfig::default()
        },
    );
    Ui {
        router,
        registry,
        _dir: dir,
    }
}

async fn send(router: &Router, req: Request<Body>) -> (StatusCode, HeaderMap, String) {
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = axum::body::to_bytes(res.into_body(), 1 << 22)
        .await
        .unwrap();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// A started flow: the state cookie and the authorization request's
/// parameters.
struct Flow {
    cookie: String,
    params: HashMap<String, String>,
}

async fn start(ui: &Ui) -> Flow {
    let (status, headers, body) = send(&ui.router, get("/ui/oidc/start", None)).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let location = headers[header::LOCATION].to_str().unwrap();
    let url = url::Url::parse(location).unwrap();
    let params: HashMap<String, String> = url.query_pairs().into_owned().collect();
    let set = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Lax"),
        "{set}"
    );
    Flow {
        cookie: set.split(';').next().unwrap().to_owned(),
        params,
    }
}

fn good_claims(idp: &Idp, flow: &Flow) -> Value {
    json!({
        "iss": idp.issuer,
        "sub": "user-42",
        "aud": CLIENT_ID,
        "exp": now() + 300,
        "iat": now(),
        "nonce": flow.params["nonce"],
        "email": "dev@acme.example",
        "email_verified": true,
        "groups": ["staff"],
    })
}

/// The provider issues `id_token` for code `code` of `flow`.
fn grant(idp: &Idp, flow: &Flow, code: &str, id_token: String) {
    idp.state.lock().unwrap().grants.insert(
        code.to_owned(),
        Grant {
            challenge: flow.params["code_challenge"].clone(),
            id_token,
        },
    );
}

async fn callback(ui: &Ui, cookie: Option<&str>, query: &str) -> (StatusCode, HeaderMap, String) {
    send(
        &ui.router,
        get(&format!("/ui/oidc/callback?{query}"), cookie),
    )
    .await
}

fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("skilldeck_ui=") && !c.starts_with("skilldeck_ui=;"))
        .map(|c| c.split(';').next().unwrap().to_owned())
}

/// Runs a whole sign-in whose ID token is `make(claims)`; returns the
/// callback's answer.
async fn sign_in_with(
    idp: &Idp,
    ui: &Ui,
    make: impl FnOnce(Value) -> String,
) -> (StatusCode, HeaderMap, String) {
    let flow = start(ui).await;
    let claims = good_claims(idp, &flow);
    grant(idp, &flow, "code-1", make(claims));
    callback(
        ui,
        Some(&flow.cookie),
        &format!("code=code-1&state={}", flow.params["state"]),
    )
    .await
}

#[tokio::test]
async fn a_valid_sign_in_makes_a_session_and_an_audit_line_with_subject_and_email() {
    let idp = idp().await;
    let ui = ui(&idp.issuer).await;
    let (status, _, html) = send(&ui.router, get("/ui/signin", None)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("href=\"/ui/oidc/start\"") && html.contains("Acme SSO"),
        "{html}"
    );
    let flow = start(&ui).await;
    assert_eq!(flow.params["response_type"], "code");
    assert_eq!(flow.params["code_challenge_method"], "S256");
    assert_eq!(flow.params["client_id"], CLIENT_ID);
    assert!(flow.params["scope"].split(' ').any(|s| s == "openid"));
    grant(
        &idp,
        &flow,
        "code-ok",
        sign(&idp.key, &good_claims(&idp, &flow)),
    );
    let (status, headers, html) = callback(
        &ui,
        Some(&flow.cookie),
        &format!("code=code-ok&state={}", flow.params["state"]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("url=/ui/skills"), "{html}");
    let session = session_cookie(&headers).expect("a session cookie");
    let (status, _, html) = send(&ui.router, get("/ui/skills", Some(&session))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("dev@acme.example"), "the page names the user");
    let admin = skilldeck_registry::Principal {
        token_id: "t".into(),
        name: "t".into(),
        scopes: vec![skilldeck_registry::Scope::Admin],
    };
    let audit = ui.registry.audit(&admin, None, Some(10)).await.unwrap();
    let line = audit
        .items
        .iter()
        .find(|e| e.action == "ui.sign-in")
        .expect("an audit line");
    assert_eq!(line.detail["subject"], "user-42");
    assert_eq!(line.detail["email"], "dev@acme.example");
    assert_eq!(line.detail["method"], "oidc");
    assert_eq!(line.detail["scopes"], json!(["publish:acme"]));
    assert!(line.actor.contains("oidc:user-42"), "{}", line.actor);
}

#[tokio::test]
async fn a_callback_whose_state_is_not_this_browsers_is_refused_before_the_code_is_redeemed() {
    let idp = idp().await;
    let ui = ui(&idp.issuer).await;
    let flow = start(&ui).await;
    grant(
        &idp,
        &flow,
        "code-x",
        sign(&idp.key, &good_claims(&idp, &flow)),
    );
    // The attacker's state (e.g. their own flow's) with this browser's cookie.
    let (status, headers, html) =
        callback(&ui, Some(&flow.cookie), "code=code-x&state=attacker-state").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(html.contains("state mismatch"), "{html}");
    assert!(session_cookie(&headers).is_none());
    // No cookie at all (login CSRF: a code pushed into another browser).
    let (status, headers, html) = callback(
        &ui,
        None,
        &format!("code=code-x&state={}", flow.params["state"]),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(html.contains("not started in this browser"), "{html}");
    assert!(session_cookie(&headers).is_none());
    // A cookie whose MAC does not match.
    let forged = format!("{}x", flow.cookie);
    let (status, _, _) = callback(
        &ui,
        Some(&forged),
        &format!("code=code-x&state={}", flow.params["state"]),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        idp.state.lock().unwrap().redeemed.is_empty(),
        "a code was redeemed"
    );
}

#[tokio::test]
async fn an_id_token_with_another_flows_nonce_is_refused() {
    let idp = idp().await;
    let ui = ui(&idp.issuer).await;
    let (status, headers, html) = sign_in_with(&idp, &ui, |mut c| {
        c["nonce"] = json!("a-replayed-nonce");
        sign(&idp.key, &c)
    })
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{html}");
    assert!(html.contains("failed verification"), "{html}");
    assert!(html.to_lowercase().contains("nonce"), "{html}");
    assert!(session_cookie(&headers).is_none());
}

#[tokio::test]
async fn an_expired_id_token_is_refused() {
    let idp = idp().await;
    let ui = ui(&idp.issuer).await;
    let (status, headers, html) = sign_in_with(&idp, &ui, |mut c| {
        c["exp"] = json!(now() - 600);
        c["iat"] = json!(now() - 900);
        sign(&idp.key, &c)
    })
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{html}");
    assert!(
        html.contains("failed verification") && html.contains("expired"),
        "{html}"
    );
    assert!(session_cookie(&headers).is_none());
}

#[tokio::test]
async fn an_id_token_signed_by_another_key_or_not_at_all_is_refused() {
    let idp = idp().await;
    let ui = ui(&idp.issuer).await;
    let attacker = random_key();
    let (status, headers, html) = sign_in_with(&idp, &ui, |c| sign(&attacker, &c)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{html}");
    assert!(html.contains("failed verification"), "{html}");
    assert!(session_cookie(&headers).is_none());
    // alg "none": an unsigned token.
    let (status, headers, html) = sign_in_with(&idp, &ui, |c| {
        format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "JWT"}).to_string()),
            URL_SAFE_NO_PAD.encode(c.to_string())
        )
    })
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{html}");
    assert!(session_cookie(&headers).is_none());
    // A valid signature over claims changed afterwards.
    let (status, headers, _) = sign_in_with(&idp, &ui, |c| {
        let token = sign(&idp.key, &c);
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let mut changed = c.clone();
        changed["groups"] = json!(["registry-admins"]);
        parts[1] = URL_SAFE_NO_PAD.encode(changed.to_string());
        parts.join(".")
    })
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(session_cookie(&headers).is_none());
}

#[tokio::test]
async fn an_id_token_for_another_client_or_from_another_issuer_is_refused() {
    let idp = idp().await;
    let ui = ui(&idp.issuer).await;
    let (status, headers, html) = sign_in_with(&idp, &ui, |mut c| {
        c["aud"] = json!("another-client");
        sign(&idp.key, &c)
    })
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{html}");
    assert!(session_cookie(&headers).is_none());
    let (status, headers, html) = sign_in_with(&idp, &ui, |mut c| {
        c["iss"] = json!("https://evil.example");
        sign(&idp.key, &c)
    })
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{html}");
    assert!(session_cookie(&headers).is_none());
}

#[tokio::test]
async fn a_user_no_rule_matches_is_refused_with_a_page_naming_the_account() {
    let idp = idp().await;
    let ui = ui(&idp.issuer).await;
    let (status, headers, html) = sign_in_with(&idp, &ui, |mut c| {
        c["email"] = json!("someone@elsewhere.example");
        c["groups"] = json!(["staff"]);
        sign(&idp.key, &c)
    })
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{html}");
    assert!(
        html.contains("someone@elsewhere.example") && html.contains("no single sign-on rule"),
        "{html}"
    );
    assert!(session_cookie(&headers).is_none());
    // An unverified email of the right domain does not match the email rule.
    let (status, headers, html) = sign_in_with(&idp, &ui, |mut c| {
        c["email_verified"] = json!(false);
        sign(&idp.key, &c)
    })
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{html}");
    assert!(html.contains("did not verify the email"), "{html}");
    assert!(session_cookie(&headers).is_none());
}

#[tokio::test]
async fn a_provider_whose_discovery_or_keys_fail_lets_nobody_in_and_the_page_says_why() {
    // Nothing listens on the issuer's port.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let ui_down = ui(&format!("http://{closed}")).await;
    let (status, _, html) = send(&ui_down.router, get("/ui/signin", None)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("id=\"sso-unavailable\"") && html.contains("discovery at"),
        "{html}"
    );
    assert!(!html.contains("href=\"/ui/oidc/start\""), "{html}");
    let (status, _, _) = send(&ui_down.router, get("/ui/oidc/start", None)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    // A provider whose key set is empty.
    let empty = idp_with(|_| json!({"keys": []})).await;
    let ui_empty = ui(&empty.issuer).await;
    let (_, _, html) = send(&ui_empty.router, get("/ui/signin", None)).await;
    assert!(html.contains("holds no keys"), "{html}");
    let (status, _, _) = send(&ui_empty.router, get("/ui/oidc/start", None)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}
