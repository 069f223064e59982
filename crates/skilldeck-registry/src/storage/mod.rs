//! The registry's storage layer: every SQL statement, one file per
//! concern, for SQLite and PostgreSQL alike (sqlx `any`, `$n` parameters,
//! text times, JSON as text). The service above decides who may do what
//! and what the audit line says; this layer only reads and writes rows.
//!
//! - [`db`]: the database ([`Db`](db::Db): opening, migrations, reads on
//!   the pool) and a write ([`Write`](db::Write): one transaction that
//!   first bumps the database generation, so writes are serialised and
//!   each gets a fresh number, the audit id).
//! - [`skills`], [`versions`], [`labels`]: skills, their immutable
//!   versions with files, and the labels pointing at versions.
//! - [`policies`], [`signers`]: what a namespace requires (review,
//!   signatures) and the keys allowed to sign its versions.
//! - [`agents`]: agents and their assignments.
//! - [`tokens`]: bearer tokens (hashes, scopes, lifecycle times).
//! - [`audit`]: the audit log.
//! - [`auth_failures`]: failed authentications per key and window,
//!   counted across replicas.
//! - [`browse`]: the web UI's skill lists (totals, filters, sort).
//! - [`generations`]: the last write per cache scope, and the
//!   notifications that carry them to the other replicas.
//! - [`ui_sessions`]: the web UI's sessions and shared keys (every
//!   replica reads them: no session affinity).
//!
//! Reads that a service operation needs inside its write (for
//! atomicity) take the [`Write`](db::Write); the others take the
//! [`Db`](db::Db). A function never opens a transaction of its own: a
//! write's atomicity is the service operation's, visible in its body
//! (`begin_write` ... `commit`).

pub(crate) mod agents;
pub(crate) mod audit;
pub(crate) mod auth_failures;
pub(crate) mod browse;
pub(crate) mod db;
pub(crate) mod generations;
pub(crate) mod labels;
pub(crate) mod policies;
pub(crate) mod signers;
pub(crate) mod skills;
pub(crate) mod tokens;
pub(crate) mod ui_sessions;
pub(crate) mod versions;

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every `.rs` file under `dir`, recursively.
    fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.map(|e| e.path()).unwrap_or_default();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_sql_statement_is_in_the_storage_layer() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        for face in ["service", "http"] {
            sources(&src.join(face), &mut files);
        }
        assert!(!files.is_empty());
        let mut found = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                if code.contains("sqlx::")
                    || ["SELECT ", "INSERT INTO", "UPDATE ", "DELETE FROM"]
                        .iter()
                        .any(|k| code.contains(k))
                {
                    found.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "SQL outside src/storage:\n{}",
            found.join("\n")
        );
    }
}
