//! Two registry replicas (two registries, two UI routers) on one database:
//! the UI needs no session affinity. A sign-in form served by one replica
//! is accepted by the other, a session made on one is used on the other
//! (pages and a CSRF-protected form), and a sign-out on one ends the
//! session on both.
//!
//! Runs on SQLite in a temporary folder, or on the PostgreSQL server
//! `SKILLDECK_REGISTRY_TEST_DATABASE_URL` names (a fresh database per
//! test, dropped after; unreachable fails the test).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::http::{StatusCode, header};
use skilldeck_registry::{Registry, RegistryConfig};
use skilldeck_registry_ui::ui_router;

use crate::common::{cookie_of, csrf_of, get, post_form, send, urlencode};

const DB_ENV: &str = "SKILLDECK_REGISTRY_TEST_DATABASE_URL";

struct Replicas {
    a: Router,
    b: Router,
    token: String,
    registry_a: Registry,
    drop_db: Option<(String, String)>,
    _dir: tempfile::TempDir,
}

impl Drop for Replicas {
    fn drop(&mut self) {
        if let Some((url, db)) = self.drop_db.take() {
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    if let Ok(pool) = sqlx::AnyPool::connect(&url).await {
                        let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                            "DROP DATABASE IF EXISTS {db} WITH (FORCE)"
                        )))
                        .execute(&pool)
                        .await;
                    }
                });
            })
            .join()
            .ok();
        }
    }
}

fn with_database(url: &str, db: &str) -> String {
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (url, None),
    };
    let scheme_end = head.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match head[scheme_end..].find('/') {
        Some(i) => &head[..scheme_end + i],
        None => head,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}

async fn replicas() -> Replicas {
    let dir = tempfile::tempdir().unwrap();
    let (database_url, drop_db) = match std::env::var(DB_ENV).ok().filter(|v| !v.is_empty()) {
        Some(url) => {
            sqlx::any::install_default_drivers();
            let pool = sqlx::AnyPool::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("{DB_ENV} cannot be reached: {e}"));
            let mut b = [0u8; 6];
            getrandom::fill(&mut b).unwrap();
            let db = format!(
                "t_{}",
                b.iter().map(|x| format!("{x:02x}")).collect::<String>()
            );
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {db}")))
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
            (with_database(&url, &db), Some((url, db)))
        }
        None => (
            format!(
                "sqlite://{}?mode=rwc",
                dir.path().join("registry.db").display()
            ),
            None,
        ),
    };
    let open = |staging: &str| RegistryConfig {
        database_url: database_url.clone(),
        store_url: format!("file://{}", dir.path().join("blobs").display()),
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
        drop_db,
        _dir: dir,
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
