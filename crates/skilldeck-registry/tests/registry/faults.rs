//! The registry bounded under faults (issue 29): a writer stalled while
//! it holds the write lock (a paused replica) does not stall the other
//! replicas' writes beyond the lock timeout, nor their reads at all; the
//! database ends a paused replica's idle transaction; `/readyz` says when
//! a replica cannot serve; replicas starting together on one missing admin
//! token file all start; failed authentications are limited across
//! replicas, and a flood past the limit costs no database query.
//!
//! Two registries on one database stand for two replicas. Backends as in
//! `api.rs`: SQLite + a file store unless `SKILLDECK_REGISTRY_TEST_DATABASE_URL`
//! names a PostgreSQL server (a fresh database per test) and
//! `SKILLDECK_REGISTRY_TEST_STORE` an S3 bucket.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use skilldeck_registry::{DbLimits, Registry, RegistryConfig, RegistryLimits};
use sqlx::Connection as _;

use crate::common::{DB_ENV, TestBackend, test_backend};

/// A bound on events that must happen (a guard against a hang, never a
/// timing assertion): generous for a loaded 2-core machine.
const EVENT_BOUND: Duration = Duration::from_secs(120);

/// A failed-authentication window no test run crosses twice.
const LONG_WINDOW: Duration = Duration::from_secs(10 * 24 * 60 * 60);

/// One replica: a registry on the shared backend, served on 127.0.0.1:0.
struct Replica {
    base: String,
    client: reqwest::Client,
    admin: String,
    registry: Registry,
}

impl TestBackend {
    async fn replica(&self, name: &str, limits: RegistryLimits) -> Replica {
        let registry = Registry::open(RegistryConfig {
            database_url: self.database_url.clone(),
            store_url: self.store_url.clone(),
            staging_dir: self.tmp.path().join(format!("staging-{name}")),
            limits,
            trust: Default::default(),
            report: Default::default(),
        })
        .await
        .unwrap_or_else(|e| panic!("cannot open the registry: {e}"));
        let token_file = self.tmp.path().join("admin-token");
        registry.ensure_admin_token(&token_file).await.unwrap();
        let admin = std::fs::read_to_string(&token_file)
            .unwrap()
            .trim()
            .to_owned();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = skilldeck_registry::http::api_router(registry.clone());
        tokio::spawn(async move {
            skilldeck_registry::http::serve(
                listener,
                app,
                skilldeck_registry::ServerLimits::default(),
                std::future::pending(),
            )
            .await
            .unwrap();
        });
        let replica = Replica {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            admin,
            registry,
        };
        // The admin token is verified (and cached) by this replica.
        assert_eq!(replica.get("/api/v1/agents").await.status(), StatusCode::OK);
        replica
    }

    /// A connection of its own to the shared database, outside every
    /// replica (a stalled writer, an operator).
    async fn raw(&self) -> sqlx::AnyConnection {
        sqlx::AnyConnection::connect(&self.database_url)
            .await
            .unwrap()
    }
}

impl Replica {
    async fn get_as(&self, token: &str, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.base))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    async fn get(&self, path: &str) -> reqwest::Response {
        self.get_as(&self.admin, path).await
    }

    /// A write: creates agent `id`.
    async fn create_agent(&self, id: &str) -> reqwest::Response {
        self.client
            .post(format!("{}/api/v1/agents", self.base))
            .bearer_auth(&self.admin)
            .json(&json!({"id": id, "name": id}))
            .send()
            .await
            .unwrap()
    }
}

/// Asserts `r` is a 503 with `Retry-After` and the problem `code`.
async fn assert_busy(r: reqwest::Response, code: &str) {
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let retry: u64 = r
        .headers()
        .get("retry-after")
        .expect("a 503 of a bound says when to retry")
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
    let p: Value = r.json().await.unwrap();
    assert_eq!(p["code"], code, "{p}");
}

/// Holds the write lock from outside the registry (the row every write
/// updates first; on SQLite the database's write lock) in an open
/// transaction, as a replica paused mid-write does.
async fn hold_write_lock(conn: &mut sqlx::AnyConnection) -> sqlx::Transaction<'_, sqlx::Any> {
    let mut tx = conn.begin().await.unwrap();
    sqlx::query("UPDATE registry_state SET generation = generation WHERE id = 1")
        .execute(&mut *tx)
        .await
        .unwrap();
    tx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_writer_gets_other_writes_a_fast_503_with_retry_after_and_reads_keep_working() {
    let backend = test_backend().await;
    let limits = RegistryLimits {
        max_db_connections: 4,
        db: DbLimits {
            lock_timeout: Duration::from_millis(300),
            max_concurrent_writes: 2,
            max_queued_writes: 2,
            ..DbLimits::default()
        },
        ..RegistryLimits::default()
    };
    let replica = backend.replica("b", limits).await;
    let mut raw = backend.raw().await;
    let held = hold_write_lock(&mut raw).await;

    // More writers than the pool has connections: with no bound they
    // would wait for the lock forever and take every connection.
    let writers: Vec<_> = (0..12)
        .map(|i| {
            let base = replica.base.clone();
            let client = replica.client.clone();
            let admin = replica.admin.clone();
            tokio::spawn(async move {
                client
                    .post(format!("{base}/api/v1/agents"))
                    .bearer_auth(admin)
                    .json(&json!({"id": format!("w{i}"), "name": "w"}))
                    .send()
                    .await
                    .unwrap()
            })
        })
        .collect();
    // Reads go on while the writers wait.
    for path in ["/api/v1/agents", "/api/v1/skills", "/api/v1/tokens"] {
        let r = replica.get(path).await;
        assert_eq!(
            r.status(),
            StatusCode::OK,
            "{path} while writes are blocked"
        );
    }
    let answered = tokio::time::timeout(EVENT_BOUND, futures::future::join_all(writers))
        .await
        .expect("writes behind a stalled writer were never answered");
    for r in answered {
        assert_busy(r.unwrap(), "registry-busy").await;
    }
    // Still held: one more write is refused the same way, and reads work.
    assert_busy(replica.create_agent("late").await, "registry-busy").await;
    assert_eq!(replica.get("/api/v1/agents").await.status(), StatusCode::OK);

    // The holder goes away: writes work again.
    held.rollback().await.unwrap();
    assert_eq!(
        replica.create_agent("after").await.status(),
        StatusCode::CREATED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_paused_mid_write_is_cut_by_the_idle_in_transaction_timeout() {
    let backend = test_backend().await;
    if backend.postgres.is_none() {
        // SQLite has no server to end an idle session: a stalled writer
        // there is a thread of this process, bounded by the lock timeout
        // of the others (the test above).
        eprintln!("PostgreSQL only (set {DB_ENV}); SQLite has no idle-in-transaction timeout");
        return;
    }
    let paused = backend
        .replica(
            "a",
            RegistryLimits {
                db: DbLimits {
                    idle_in_transaction_timeout: Duration::from_millis(500),
                    ..DbLimits::default()
                },
                ..RegistryLimits::default()
            },
        )
        .await;
    let other = backend
        .replica(
            "b",
            RegistryLimits {
                db: DbLimits {
                    lock_timeout: Duration::from_millis(200),
                    ..DbLimits::default()
                },
                ..RegistryLimits::default()
            },
        )
        .await;
    let stalled = paused.registry.stall_in_write().await.unwrap();
    // Until the database ends the paused write, the other replica's
    // writes are answered 503 in its lock timeout; then they go through.
    let resumed = tokio::time::timeout(EVENT_BOUND, async {
        let mut i = 0;
        loop {
            i += 1;
            let r = other.create_agent(&format!("b{i}")).await;
            if r.status() == StatusCode::CREATED {
                return i;
            }
            assert_busy(r, "registry-busy").await;
        }
    })
    .await
    .expect("the paused replica's idle transaction was never ended");
    assert!(resumed >= 1);
    // The paused replica wakes up: its write is gone, not committed late.
    assert!(stalled.resume().await.is_err());
    assert_eq!(paused.get("/api/v1/agents").await.status(), StatusCode::OK);
    assert_eq!(
        paused.create_agent("a-after").await.status(),
        StatusCode::CREATED
    );
}

async fn readiness(replica: &Replica) -> (StatusCode, Value) {
    let r = replica
        .client
        .get(format!("{}/readyz", replica.base))
        .send()
        .await
        .unwrap();
    (r.status(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_while_migrations_are_missing_and_liveness_does_not() {
    let backend = test_backend().await;
    let replica = backend.replica("a", RegistryLimits::default()).await;
    let (status, body) = readiness(&replica).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ready"], true);

    let mut raw = backend.raw().await;
    sqlx::query(
        "DELETE FROM _sqlx_migrations WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)",
    )
    .execute(&mut raw)
    .await
    .unwrap();
    let (status, body) = readiness(&replica).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["ready"], false);
    assert_eq!(body["database"]["ok"], true);
    assert_eq!(body["migrations"]["ok"], false);
    assert!(
        body["migrations"]["detail"]
            .as_str()
            .unwrap()
            .contains("not applied"),
        "{body}"
    );
    let live = replica
        .client
        .get(format!("{}/healthz", replica.base))
        .send()
        .await
        .unwrap();
    assert_eq!(live.status(), StatusCode::OK, "alive, only not ready");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_while_the_database_is_unreachable() {
    let backend = test_backend().await;
    let replica = backend
        .replica(
            "a",
            RegistryLimits {
                db: DbLimits {
                    lock_timeout: Duration::from_millis(200),
                    acquire_timeout: Duration::from_millis(500),
                    ..DbLimits::default()
                },
                ..RegistryLimits::default()
            },
        )
        .await;
    assert_eq!(readiness(&replica).await.0, StatusCode::OK);
    match &backend.postgres {
        Some((server, db)) => {
            // No new session, and the pool's sessions ended: PostgreSQL
            // is gone for this replica.
            let admin = sqlx::AnyPool::connect(server).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "ALTER DATABASE {db} ALLOW_CONNECTIONS false"
            )))
            .execute(&admin)
            .await
            .unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'"
            )))
            .execute(&admin)
            .await
            .unwrap();
            let (status, body) = readiness(&replica).await;
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
            assert_eq!(body["database"]["ok"], false, "{body}");
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "ALTER DATABASE {db} ALLOW_CONNECTIONS true"
            )))
            .execute(&admin)
            .await
            .unwrap();
            // Back: the pool reconnects and the replica is ready again.
            tokio::time::timeout(EVENT_BOUND, async {
                while readiness(&replica).await.0 != StatusCode::OK {
                    tokio::task::yield_now().await;
                }
            })
            .await
            .expect("the replica never became ready again");
        }
        None => {
            // SQLite is a file this process has open: it cannot become
            // unreachable the way a database server does (the missing
            // migrations test covers readiness there).
            eprintln!("PostgreSQL only (set {DB_ENV}): SQLite has no server to lose");
            return;
        }
    }
    let live = replica
        .client
        .get(format!("{}/healthz", replica.base))
        .send()
        .await
        .unwrap();
    assert_eq!(live.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_racing_on_a_missing_admin_token_file_all_start_with_one_token() {
    let backend = test_backend().await;
    let a = backend.replica("a", RegistryLimits::default()).await;
    let b = backend.replica("b", RegistryLimits::default()).await;
    for round in 0..20 {
        let file = backend
            .tmp
            .path()
            .join(format!("shared/round-{round}/admin-token"));
        let starts: Vec<_> = (0..4)
            .map(|i| {
                let registry = if i % 2 == 0 {
                    a.registry.clone()
                } else {
                    b.registry.clone()
                };
                let file = file.clone();
                tokio::spawn(async move { registry.ensure_admin_token(&file).await })
            })
            .collect();
        for (i, start) in futures::future::join_all(starts)
            .await
            .into_iter()
            .enumerate()
        {
            if let Err(e) = start.unwrap() {
                panic!("round {round}: start {i} failed: {e}");
            }
        }
        let token = std::fs::read_to_string(&file).unwrap().trim().to_owned();
        assert!(token.starts_with("sdk_"), "round {round}: {token:?}");
        for replica in [&a, &b] {
            let r = replica.get_as(&token, "/api/v1/agents").await;
            assert_eq!(r.status(), StatusCode::OK, "round {round}");
        }
    }
    // Each round's token replaced the previous round's: one live
    // file-sourced admin token, registered once per round.
    let last = std::fs::read_to_string(backend.tmp.path().join("shared/round-19/admin-token"))
        .unwrap()
        .trim()
        .to_owned();
    let page: Value = a
        .get_as(&last, "/api/v1/tokens?limit=500")
        .await
        .json()
        .await
        .unwrap();
    let file_tokens: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["source"] == "admin-file")
        .collect();
    assert_eq!(file_tokens.len(), 21, "one per round and the first: {page}");
    assert_eq!(
        file_tokens
            .iter()
            .filter(|t| t["status"] == "active")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_token_flood_is_limited_across_replicas_and_costs_no_query_past_the_limit() {
    let backend = test_backend().await;
    let limits = RegistryLimits {
        max_failed_auth: 4,
        failed_auth_window: LONG_WINDOW,
        failed_auth_probe_interval: LONG_WINDOW,
        // The admin token stays verified for the whole test.
        auth_cache_ttl: LONG_WINDOW,
        ..RegistryLimits::default()
    };
    let a = backend.replica("a", limits.clone()).await;
    let b = backend.replica("b", limits).await;
    let bad = |i: u32| format!("sdk_flood{i:04}-not-a-token");
    for i in 0..3 {
        let r = a.get_as(&bad(i), "/api/v1/agents").await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "attempt {i} on a");
    }
    let r = b.get_as(&bad(3), "/api/v1/agents").await;
    assert_eq!(
        r.status(),
        StatusCode::UNAUTHORIZED,
        "the 4th failure, on b"
    );
    // The 5th failure of this address, its 2nd on b: over the shared
    // limit, though b alone saw only two.
    let r = b.get_as(&bad(4), "/api/v1/agents").await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
    let p: Value = r.json().await.unwrap();
    assert_eq!(p["code"], "registry-too-many-attempts");
    // a sees it too, at its next failure.
    assert_eq!(
        a.get_as(&bad(5), "/api/v1/agents").await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    // Each throttled replica looks one token up per probe interval: both
    // probes are spent now.
    for replica in [&a, &b] {
        assert_eq!(
            replica.get_as(&bad(6), "/api/v1/agents").await.status(),
            StatusCode::TOO_MANY_REQUESTS
        );
    }

    // Past the limit a flood must cost no query: with the token table
    // gone, any lookup would fail (503); every answer is 429.
    let mut raw = backend.raw().await;
    sqlx::query("ALTER TABLE tokens RENAME TO tokens_away")
        .execute(&mut raw)
        .await
        .unwrap();
    for i in 100..160 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let r = replica.get_as(&bad(i), "/api/v1/agents").await;
        assert_eq!(
            r.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "flood request {i}"
        );
        assert!(r.headers().contains_key("retry-after"));
    }
    // A token each replica verified before is still accepted from the
    // throttled address.
    for replica in [&a, &b] {
        assert_eq!(replica.get("/api/v1/agents").await.status(), StatusCode::OK);
    }
    sqlx::query("ALTER TABLE tokens_away RENAME TO tokens")
        .execute(&mut raw)
        .await
        .unwrap();
}
