//! Two registry replicas (two registries, two UI routers) on one database:
//! the UI needs no session affinity. A sign-in form served by one replica
//! is accepted by the other, a session made on one is used on the other
//! (pages and a CSRF-protected form), and a sign-out on one ends the
//! session on both.
//!
//! Runs on the backend the environment names, set up as the registry's own
//! suite sets it up (`backend`): SQLite and a file store in a temporary
//! folder, or the PostgreSQL server `SKILLDECK_REGISTRY_TEST_DATABASE_URL`
//! names (a fresh database per test, dropped after; unreachable fails the
//! test) and the S3 bucket `SKILLDECK_REGISTRY_TEST_STORE` names.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::http::{StatusCode, header};
use skilldeck_registry::{Registry, RegistryConfig};
use skilldeck_registry_ui::ui_router;

use crate::backend::{TestBackend, test_backend};
use crate::common::{cookie_of, csrf_of, get, post_form, send, urlencode};

struct Replicas {
    a: Router,
    b: Router,
    token: String,
    registry_a: Registry,
    /// Last: dropped after the registries (the test database goes with it).
    _backend: TestBackend,
}

async fn replicas() -> Replicas {
    let backend = test_backend().await;
    let dir = &backend.tmp;
    let open = |staging: &str| RegistryConfig {
        database_url: backend.database_url.clone(),
        store_url: backend.store_url.clone(),
        staging_dir: dir.path().join(staging),
        limits: Default::default(),
        trust: Default::default(),
        report: Default::default(),
    };
    let registry_a = Registry::open(open("staging-a")).await.unwrap();
    let registry_b = Registry::open(open("staging-b")).await.unwrap();
    let token_file = registry_a
        .ensure_admin_token(&dir.path().join("admin-token"))
        .await
        .unwrap();
    let token = std::fs::read_to_string(token_file)
        .unwrap()
        .trim()
        .to_owned();
    Replicas {
        a: ui_router(registry_a.clone()),
        b: ui_router(registry_b),
        token,
        registry_a,
        _backend: backend,
    }
}

#[tokio::test]
async fn a_session_signed_in_on_one_replica_works_on_the_other_and_a_sign_out_ends_it_on_both() {
    let r = replicas().await;
    // The sign-in form from replica A, posted to replica B.
    let (_, headers, html) = send(&r.a, get("/ui/signin", None)).await;
    let form_cookie = cookie_of(&headers);
    let body = format!("token={}&csrf={}", urlencode(&r.token), csrf_of(&html));
    let (status, headers, text) = send(&r.b, post_form("/ui/signin", &form_cookie, &body)).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{text}");
    let session = cookie_of(&headers);

    // The session works on both replicas.
    for (name, replica) in [("a", &r.a), ("b", &r.b)] {
        let (status, _, _) = send(replica, get("/ui/skills", Some(&session))).await;
        assert_eq!(status, StatusCode::OK, "replica {name}");
    }

    // A form rendered by A, submitted to B (CSRF-protected), and its flash
    // message shown by A.
    let (status, _, html) = send(&r.a, get("/ui/agents/new", Some(&session))).await;
    assert_eq!(status, StatusCode::OK);
    let csrf = csrf_of(&html);
    let (status, headers, text) = send(
        &r.b,
        post_form(
            "/ui/agents",
            &session,
            &format!("id=bot&name=Bot&csrf={csrf}"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{text}");
    let next = headers[header::LOCATION].to_str().unwrap().to_owned();
    let (status, _, html) = send(&r.a, get(&next, Some(&session))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("Agent bot created"),
        "the flash set on B is shown by A"
    );
    let admin = r.registry_a.authenticate(&r.token, None).await.unwrap();
    let bot = skilldeck_registry::names::AgentId::new("bot").unwrap();
    assert!(r.registry_a.agent(&admin, &bot).await.is_ok());

    // A wrong token is still refused on the other replica.
    let (status, _, _) = send(
        &r.b,
        post_form("/ui/agents", &session, "id=bot2&name=Bot&csrf=forged"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Sign out on B: the session is gone on A at once.
    let (status, _, _) = send(
        &r.b,
        post_form("/ui/signout", &session, &format!("csrf={csrf}")),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    for (name, replica) in [("a", &r.a), ("b", &r.b)] {
        let (status, headers, _) = send(replica, get("/ui/skills", Some(&session))).await;
        assert_eq!(
            status,
            StatusCode::SEE_OTHER,
            "replica {name} still takes the session"
        );
        assert_eq!(headers[header::LOCATION], "/ui/signin");
        let (status, _, _) = send(
            replica,
            post_form(
                "/ui/agents",
                &session,
                &format!("id=bot3&name=Bot&csrf={csrf}"),
            ),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "replica {name} takes a form of an ended session"
        );
    }
}

#[tokio::test]
async fn revoking_a_token_ends_its_ui_sessions_on_every_replica() {
    let r = replicas().await;
    let (_, headers, html) = send(&r.a, get("/ui/signin", None)).await;
    let form_cookie = cookie_of(&headers);
    let body = format!("token={}&csrf={}", urlencode(&r.token), csrf_of(&html));
    let (_, headers, _) = send(&r.a, post_form("/ui/signin", &form_cookie, &body)).await;
    let session = cookie_of(&headers);
    let (status, _, _) = send(&r.b, get("/ui/skills", Some(&session))).await;
    assert_eq!(status, StatusCode::OK);
    let admin = r.registry_a.authenticate(&r.token, None).await.unwrap();
    r.registry_a
        .revoke_token(&admin, &admin.token_id)
        .await
        .unwrap();
    // Replica B cached the token as valid; its session row is gone anyway.
    let (status, headers, _) = send(&r.b, get("/ui/skills", Some(&session))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/ui/signin");
}
