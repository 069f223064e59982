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
pub fn random_suffix() -> String {
    let mut b = [0u8; 6];
    getrandom::fill(&mut b).unwrap();
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `url` with its database path replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
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
