//! The UI router over a real registry (SQLite and a blob folder in a
//! temporary directory): sign-in, the CSRF wall, security headers and
//! static assets, through the same `Router` the server merges.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use skilldeck_registry::{Registry, RegistryConfig, RegistryLimits};
use skilldeck_registry_ui::ui_router;
use tower::ServiceExt as _;

struct Fixture {
    router: Router,
    registry: Registry,
    token: String,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("registry.db");
    let registry = Registry::open(RegistryConfig {
        database_url: format!("sqlite://{}?mode=rwc", db.display()),
        store_url: format!("file://{}", dir.path().join("blobs").display()),
        staging_dir: dir.path().join("staging"),
        limits: RegistryLimits::default(),
    })
    .await
    .unwrap();
    let token_file = registry
        .ensure_admin_token(&dir.path().join("admin-token"))
        .await
        .unwrap();
    let token = std::fs::read_to_string(token_file)
        .unwrap()
        .trim()
        .to_owned();
    Fixture {
        router: ui_router(registry.clone()),
        registry,
        token,
        _dir: dir,
    }
}

async fn send(router: &Router, req: Request<Body>) -> (StatusCode, axum::http::HeaderMap, String) {
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = axum::body::to_bytes(res.into_body(), 1 << 22)
        .await
        .unwrap();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

fn get(path: &str, cookie: Option<&str>) -> Request<Body> {
    let mut b = Request::builder()
        .uri(path)
        .header(header::HOST, "127.0.0.1:7878");
    if let Some(c) = cookie {
        b = b.header(header::COOKIE, c);
    }
    b.body(Body::empty()).unwrap()
}

fn post_form(path: &str, cookie: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri(path)
        .header(header::HOST, "127.0.0.1:7878")
        .header(header::COOKIE, cookie)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

fn cookie_of(headers: &axum::http::HeaderMap) -> String {
    let set = headers[header::SET_COOKIE].to_str().unwrap();
    set.split(';').next().unwrap().to_owned()
}

fn csrf_of(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    html[at..at + 43].to_owned()
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[tokio::test]
async fn pages_need_a_session_and_sign_in_rotates_the_session_id() {
    let f = fixture().await;
    let (status, headers, _) = send(&f.router, get("/ui/skills", None)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/ui/signin");

    let (status, headers, html) = send(&f.router, get("/ui/signin", None)).await;
    assert_eq!(status, StatusCode::OK);
    let set = headers[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.contains(&f.token));
    let anon = cookie_of(&headers);
    let csrf = csrf_of(&html);

    // Without the token: refused before the handler.
    let body = format!("token={}", urlencode(&f.token));
    let (status, _, _) = send(&f.router, post_form("/ui/signin", &anon, &body)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // A wrong API token: 401, still on the form.
    let body = format!("token=sdk_wrong&csrf={csrf}");
    let (status, _, html) = send(&f.router, post_form("/ui/signin", &anon, &body)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(html.contains("not valid"));

    let body = format!("token={}&csrf={csrf}", urlencode(&f.token));
    let (status, headers, _) = send(&f.router, post_form("/ui/signin", &anon, &body)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let signed = cookie_of(&headers);
    assert_ne!(signed, anon, "signing in must issue a new session id");

    let (status, _, html) = send(&f.router, get("/ui/skills", Some(&signed))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("No skills yet"), "the empty state");
    // The anonymous id is not signed in.
    let (status, _, _) = send(&f.router, get("/ui/skills", Some(&anon))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn every_ui_response_carries_the_security_headers_and_no_inline_script() {
    let f = fixture().await;
    for path in ["/ui/signin", "/ui/skills", "/ui/nowhere"] {
        let (_, headers, html) = send(&f.router, get(path, None)).await;
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"));
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(!html.contains("<script>"), "inline script in {path}");
        assert!(!html.contains("style="), "inline style in {path}");
    }
}

#[tokio::test]
async fn static_assets_are_served_by_content_hash_with_a_long_cache() {
    let f = fixture().await;
    let (_, _, html) = send(&f.router, get("/ui/signin", None)).await;
    let at = html.find("/ui/static/app.").unwrap();
    let end = at + html[at..].find('"').unwrap();
    let (status, headers, css) = send(&f.router, get(&html[at..end], None)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(css.contains(":focus-visible"));
    assert_eq!(
        headers[header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );
    let (status, _, _) = send(&f.router, get("/ui/static/app.css", None)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn sign_out_needs_the_csrf_token_and_ends_the_session() {
    let f = fixture().await;
    let (_, headers, html) = send(&f.router, get("/ui/signin", None)).await;
    let anon = cookie_of(&headers);
    let body = format!("token={}&csrf={}", urlencode(&f.token), csrf_of(&html));
    let (_, headers, _) = send(&f.router, post_form("/ui/signin", &anon, &body)).await;
    let signed = cookie_of(&headers);
    let (_, _, html) = send(&f.router, get("/ui/skills", Some(&signed))).await;
    let csrf = csrf_of(&html);

    let (status, _, _) = send(&f.router, post_form("/ui/signout", &signed, "")).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a cross-site sign-out is refused"
    );
    let (status, headers, _) = send(
        &f.router,
        post_form("/ui/signout", &signed, &format!("csrf={csrf}")),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(
        headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    let (status, _, _) = send(&f.router, get("/ui/skills", Some(&signed))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn the_session_cookie_is_secure_behind_an_https_proxy() {
    let f = fixture().await;
    let mut req = get("/ui/signin", None);
    req.headers_mut()
        .insert("x-forwarded-proto", "https".parse().unwrap());
    let (_, headers, _) = send(&f.router, req).await;
    let set = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(set.ends_with("; Secure"), "{set}");
    let (_, headers, _) = send(&f.router, get("/ui/signin", None)).await;
    assert!(
        !headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Secure")
    );
}

/// A package of skill `name` (the testkit's skill, packed).
fn package(name: &str) -> bytes::Bytes {
    let tmp = tempfile::tempdir().unwrap();
    let dir = skilldeck_testkit::skill(tmp.path(), name)
        .description(format!("Does {name} things. Use when testing."))
        .write();
    bytes::Bytes::from(
        skilldeck_package::pack(&dir, &skilldeck_package::PackOptions::default())
            .unwrap()
            .bytes,
    )
}

#[tokio::test]
async fn the_selection_preview_reports_a_name_clash_naming_both_skills() {
    let f = fixture().await;
    let admin = f.registry.authenticate(&f.token).await.unwrap();
    for ns in ["acme", "a"] {
        let ns = skilldeck_registry::names::Namespace::new(ns).unwrap();
        f.registry
            .publish(&admin, &ns, Some("1.0.0"), package("notes"))
            .await
            .unwrap();
    }
    let spec: skilldeck_registry::wire::AgentSpec = serde_json::from_value(serde_json::json!({
        "id": "bot", "name": "Bot", "auto_discover": true
    }))
    .unwrap();
    f.registry.create_agent(&admin, spec).await.unwrap();
    let agent = skilldeck_registry::names::AgentId::new("bot").unwrap();
    let assignment: skilldeck_registry::wire::Assignment =
        serde_json::from_value(serde_json::json!({})).unwrap();
    f.registry
        .assign(
            &admin,
            &agent,
            &skilldeck_registry::names::SkillRef::parse("acme/notes").unwrap(),
            assignment,
        )
        .await
        .unwrap();

    let (_, headers, html) = send(&f.router, get("/ui/signin", None)).await;
    let anon = cookie_of(&headers);
    let body = format!("token={}&csrf={}", urlencode(&f.token), csrf_of(&html));
    let (_, headers, _) = send(&f.router, post_form("/ui/signin", &anon, &body)).await;
    let signed = cookie_of(&headers);
    let (status, _, html) = send(&f.router, get("/ui/agents/bot/skills", Some(&signed))).await;
    assert_eq!(status, StatusCode::OK);
    let at = html
        .find("id=\"name-clashes\"")
        .unwrap_or_else(|| panic!("no clash notice in the preview: {html}"));
    let notice = &html[at..at + html[at..].find("</div>").unwrap()];
    assert!(
        notice.contains("data-clash=\"a/notes\"")
            && notice.contains(">acme/notes<")
            && notice.contains("never replaces an assignment"),
        "{notice}"
    );
}
