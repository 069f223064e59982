//! The web UI's sessions as the registry stores them: expiry (idle and
//! absolute), the cap, sign-out, the shared key made once, and never a
//! session id or a token in the database.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use skilldeck_registry::{Principal, Registry, RegistryConfig, Scope, SignIn, UiSessionTimes};

const TIMES: UiSessionTimes = UiSessionTimes {
    idle_timeout: Duration::from_secs(30 * 60),
    max_age: Duration::from_secs(8 * 60 * 60),
    touch_interval: Duration::from_secs(60),
    max_sessions: 100,
};

async fn registry(dir: &std::path::Path) -> Registry {
    Registry::open(RegistryConfig {
        database_url: format!("sqlite://{}?mode=rwc", dir.join("registry.db").display()),
        store_url: format!("file://{}", dir.join("blobs").display()),
        staging_dir: dir.join("staging"),
        limits: Default::default(),
        trust: Default::default(),
        report: Default::default(),
    })
    .await
    .unwrap()
}

fn admin() -> Principal {
    Principal {
        token_id: "tok_a".into(),
        name: "alice".into(),
        scopes: vec![Scope::Admin],
    }
}

#[tokio::test]
async fn a_session_is_found_by_its_id_and_the_database_holds_neither_the_id_nor_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(dir.path()).await;
    let sign_in = SignIn::Oidc {
        subject: "user-1".into(),
        email: Some("a@acme.example".into()),
    };
    r.ui_session_create("session-id-secret-value", &admin(), &sign_in, &TIMES)
        .await
        .unwrap();
    let s = r
        .ui_session("session-id-secret-value", &TIMES, true)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s.principal, admin());
    assert_eq!(s.sign_in, sign_in);
    assert!(
        r.ui_session("another-id", &TIMES, true)
            .await
            .unwrap()
            .is_none()
    );
    drop(r);
    let mut bytes = Vec::new();
    for file in ["registry.db", "registry.db-wal"] {
        bytes.extend(std::fs::read(dir.path().join(file)).unwrap_or_default());
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains(&skilldeck::secret::secret_hash("session-id-secret-value")),
        "the session row is not where this test looks"
    );
    assert!(
        !text.contains("session-id-secret-value"),
        "the raw session id is stored"
    );
}

#[tokio::test]
async fn an_idle_or_old_session_is_gone_and_a_sign_out_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(dir.path()).await;
    r.ui_session_create("s1", &admin(), &SignIn::Token, &TIMES)
        .await
        .unwrap();
    let idle = UiSessionTimes {
        idle_timeout: Duration::ZERO,
        ..TIMES
    };
    assert!(
        r.ui_session("s1", &idle, false).await.unwrap().is_none(),
        "idle"
    );
    let old = UiSessionTimes {
        max_age: Duration::ZERO,
        ..TIMES
    };
    assert!(
        r.ui_session("s1", &old, false).await.unwrap().is_none(),
        "too old"
    );
    assert!(r.ui_session("s1", &TIMES, false).await.unwrap().is_some());
    r.ui_session_end("s1").await.unwrap();
    assert!(
        r.ui_session("s1", &TIMES, false).await.unwrap().is_none(),
        "signed out"
    );
}

#[tokio::test]
async fn a_flash_message_is_shown_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(dir.path()).await;
    r.ui_session_create("s1", &admin(), &SignIn::Token, &TIMES)
        .await
        .unwrap();
    r.ui_session_flash("s1", "Saved").await.unwrap();
    let peek = r.ui_session("s1", &TIMES, false).await.unwrap().unwrap();
    assert_eq!(peek.flash, None, "a peek does not take it");
    let first = r.ui_session("s1", &TIMES, true).await.unwrap().unwrap();
    assert_eq!(first.flash.as_deref(), Some("Saved"));
    let second = r.ui_session("s1", &TIMES, true).await.unwrap().unwrap();
    assert_eq!(second.flash, None);
}

#[tokio::test]
async fn the_store_never_holds_more_than_its_cap_and_drops_the_least_recently_used() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(dir.path()).await;
    let small = UiSessionTimes {
        max_sessions: 3,
        ..TIMES
    };
    for id in ["s1", "s2", "s3", "s4", "s5"] {
        r.ui_session_create(id, &admin(), &SignIn::Token, &small)
            .await
            .unwrap();
    }
    let mut alive = Vec::new();
    for id in ["s1", "s2", "s3", "s4", "s5"] {
        if r.ui_session(id, &small, false).await.unwrap().is_some() {
            alive.push(id);
        }
    }
    assert_eq!(alive, ["s3", "s4", "s5"]);
}

#[tokio::test]
async fn every_replica_gets_the_same_shared_key_made_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = registry(dir.path()).await;
    let b = registry(dir.path()).await;
    let (ka, kb) = tokio::join!(a.ui_shared_key("ui-signing"), b.ui_shared_key("ui-signing"));
    let (ka, kb) = (ka.unwrap(), kb.unwrap());
    assert_eq!(ka.len(), skilldeck_registry::UI_KEY_BYTES);
    assert_eq!(ka, kb);
    assert_eq!(a.ui_shared_key("ui-signing").await.unwrap(), ka);
    assert_ne!(a.ui_shared_key("another").await.unwrap(), ka);
}
