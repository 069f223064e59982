//! Helpers several modules share (each had its own copy, byte for byte,
//! when the modules were test binaries of their own): where the suite's
//! database and store come from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// A PostgreSQL server for the suite (a fresh database per test); unset:
/// SQLite in a temporary folder.
pub const DB_ENV: &str = "SKILLDECK_REGISTRY_TEST_DATABASE_URL";

/// An S3 bucket for the suite (a random key prefix per test); unset: a
/// temporary folder.
pub const STORE_ENV: &str = "SKILLDECK_REGISTRY_TEST_STORE";

/// Twelve random hex digits: a name no other test picks.
fn random_suffix() -> String {
    let mut b = [0u8; 6];
    getrandom::fill(&mut b).unwrap();
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `url` with its database path replaced by `db`.
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

/// A database and a store for one test, from the environment: a fresh
/// PostgreSQL database (`t_<random>`, dropped with this value, forcibly:
/// a test may have closed it to new sessions) when [`DB_ENV`] is set, else
/// SQLite in [`TestBackend::tmp`]; an S3 key prefix (`t-<random>`) when
/// [`STORE_ENV`] is set, else a file store in `tmp`. Several registries
/// opened on one backend stand for replicas.
pub struct TestBackend {
    /// The registry's `database_url`.
    pub database_url: String,
    /// The registry's `store_url`.
    pub store_url: String,
    /// The file store's folder (`None` on S3).
    pub store_dir: Option<std::path::PathBuf>,
    /// The PostgreSQL server's URL and the test database's name.
    pub postgres: Option<(String, String)>,
    /// Staging folders, token files and the SQLite database live here.
    pub tmp: tempfile::TempDir,
}

impl Drop for TestBackend {
    fn drop(&mut self) {
        let Some((url, db)) = self.postgres.take() else {
            return;
        };
        // Drop may run inside a runtime: a thread of its own with its own.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                sqlx::any::install_default_drivers();
                if let Ok(pool) = sqlx::AnyPool::connect(&url).await {
                    for sql in [
                        format!("ALTER DATABASE {db} ALLOW_CONNECTIONS true"),
                        format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
                    ] {
                        let _ = sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await;
                    }
                }
            });
        })
        .join()
        .ok();
    }
}

/// The backend the environment names, made ready for one test. A backend
/// named but unreachable fails the test saying so; nothing is skipped.
pub async fn test_backend() -> TestBackend {
    sqlx::any::install_default_drivers();
    let tmp = tempfile::tempdir().unwrap();
    let suffix = random_suffix();
    let (database_url, postgres) = match std::env::var(DB_ENV).ok().filter(|v| !v.is_empty()) {
        Some(url) => {
            let pool = sqlx::AnyPool::connect(&url).await.unwrap_or_else(|e| {
                panic!("{DB_ENV} names a database that cannot be reached: {e}")
            });
            let db = format!("t_{suffix}");
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {db}")))
                .execute(&pool)
                .await
                .unwrap_or_else(|e| panic!("cannot create test database {db}: {e}"));
            pool.close().await;
            (with_database(&url, &db), Some((url, db)))
        }
        None => (
            format!(
                "sqlite://{}?mode=rwc",
                tmp.path().join("registry.db").display()
            ),
            None,
        ),
    };
    let (store_url, store_dir) = match std::env::var(STORE_ENV).ok().filter(|v| !v.is_empty()) {
        Some(url) => (format!("{}/t-{suffix}", url.trim_end_matches('/')), None),
        None => {
            let dir = tmp.path().join("blobs");
            (format!("file://{}", dir.display()), Some(dir))
        }
    };
    TestBackend {
        database_url,
        store_url,
        store_dir,
        postgres,
        tmp,
    }
}
