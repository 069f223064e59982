//! Browsing skills for the web UI: one page of summaries with a total,
//! filtered by namespace and by what the `latest` version needs (its
//! scripts, its `allowed-tools`, a declared capability), sorted by name or
//! by the last publish; and the facts a list shows above it (totals, the
//! namespaces, the declared capabilities). The filter is one SQL fragment
//! ([`Need::condition`]) every query here shares.

use sqlx::Row;

use crate::error::RegistryError;
use crate::storage::db::Db;
use crate::wire::SkillSummary;

/// What the `latest` version of a skill needs, as the list filters it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// It ships files under `scripts/` (something runs).
    Scripts,
    /// Its frontmatter declares `allowed-tools`.
    AllowedTools,
    /// It declares this capability in `metadata.capabilities`.
    Capability(String),
}

impl Need {
    /// The `WHERE` fragment (over `v`, the `latest` version) and the one
    /// value it binds, if any, as `$n`.
    fn condition(&self, n: usize) -> (String, Option<String>) {
        match self {
            Need::Scripts => (
                "EXISTS (SELECT 1 FROM version_files f WHERE f.namespace = v.namespace \
                 AND f.name = v.name AND f.version = v.version AND f.path LIKE 'scripts/%')"
                    .to_owned(),
                None,
            ),
            Need::AllowedTools => ("v.frontmatter LIKE '%\"allowed-tools\"%'".to_owned(), None),
            Need::Capability(word) => {
                // A capability word is `[a-z0-9._-]`: `_` is the one LIKE
                // wildcard it can hold.
                let escaped = word
                    .replace('\\', "\\\\")
                    .replace('_', "\\_")
                    .replace('%', "\\%");
                (
                    format!("(' ' || v.capabilities || ' ') LIKE ${n} ESCAPE '\\'"),
                    Some(format!("% {escaped} %")),
                )
            }
        }
    }
}

/// The order of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By namespace, then name.
    Name,
    /// The most recently published first.
    Recent,
}

const FROM: &str = "FROM skills s \
     LEFT JOIN labels l ON l.namespace = s.namespace AND l.name = s.name AND l.label = 'latest' \
     LEFT JOIN versions v ON v.namespace = l.namespace AND v.name = l.name AND v.version = l.version";

const COLUMNS: &str = "SELECT s.namespace, s.name, s.updated_at, l.version AS latest, v.description, v.audit_verdict, \
     (SELECT COUNT(*) FROM versions c WHERE c.namespace = s.namespace AND c.name = s.name) AS n ";

/// The `WHERE` clause for `namespace` (empty: all) and `need`, with the
/// values to bind after the namespace (`$1`).
fn filter(need: Option<&Need>) -> (String, Vec<String>) {
    let mut sql = " WHERE ($1 = '' OR s.namespace = $1)".to_owned();
    let mut binds = Vec::new();
    if let Some(need) = need {
        let (cond, bind) = need.condition(2);
        sql.push_str(" AND ");
        sql.push_str(&cond);
        binds.extend(bind);
    }
    (sql, binds)
}

/// One page of summaries (`offset`, `limit`) and how many match in all.
pub(crate) async fn page(
    db: &Db,
    namespace: &str,
    need: Option<&Need>,
    order: Order,
    offset: i64,
    limit: i64,
) -> Result<(Vec<SkillSummary>, u64), RegistryError> {
    let (cond, binds) = filter(need);
    let n = binds.len() + 2;
    let order_by = match order {
        Order::Name => "s.namespace, s.name",
        Order::Recent => "s.updated_at DESC, s.namespace, s.name",
    };
    let sql = format!(
        "{COLUMNS}{FROM}{cond} ORDER BY {order_by} LIMIT ${n} OFFSET ${}",
        n + 1
    );
    // Only this file's fixed fragments are formatted in; every value is bound.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(namespace.to_owned());
    for b in &binds {
        query = query.bind(b.clone());
    }
    let rows = query.bind(limit).bind(offset).fetch_all(db.pool()).await?;
    let items = rows
        .iter()
        .map(crate::storage::skills::summary_of)
        .collect::<Result<Vec<_>, _>>()?;
    let count_sql = format!("SELECT COUNT(*) {FROM}{cond}");
    let mut count =
        sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(count_sql)).bind(namespace.to_owned());
    for b in &binds {
        count = count.bind(b.clone());
    }
    let total = count.fetch_one(db.pool()).await?;
    Ok((items, u64::try_from(total).unwrap_or(0)))
}

/// The `namespace/name` of every skill of `namespace` (empty: all) that
/// matches `need`.
pub(crate) async fn keys(
    db: &Db,
    namespace: &str,
    need: Option<&Need>,
) -> Result<Vec<String>, RegistryError> {
    let (cond, binds) = filter(need);
    let sql = format!("SELECT s.namespace, s.name {FROM}{cond}");
    // Only this file's fixed fragments are formatted in; every value is bound.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(namespace.to_owned());
    for b in &binds {
        query = query.bind(b.clone());
    }
    query
        .fetch_all(db.pool())
        .await?
        .iter()
        .map(|r| {
            let ns: String = r.try_get("namespace")?;
            let name: String = r.try_get("name")?;
            Ok(format!("{ns}/{name}"))
        })
        .collect()
}

/// Skills and namespaces of `namespace` (empty: all), and the first
/// `max_namespaces` namespaces with their skill counts.
pub(crate) async fn totals(
    db: &Db,
    namespace: &str,
    max_namespaces: i64,
) -> Result<(u64, u64, Vec<(String, u64)>), RegistryError> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS skills, COUNT(DISTINCT namespace) AS namespaces FROM skills \
         WHERE ($1 = '' OR namespace = $1)",
    )
    .bind(namespace.to_owned())
    .fetch_one(db.pool())
    .await?;
    let skills: i64 = row.try_get("skills")?;
    let namespaces: i64 = row.try_get("namespaces")?;
    let per = sqlx::query(
        "SELECT namespace, COUNT(*) AS n FROM skills WHERE ($1 = '' OR namespace = $1) \
         GROUP BY namespace ORDER BY namespace LIMIT $2",
    )
    .bind(namespace.to_owned())
    .bind(max_namespaces)
    .fetch_all(db.pool())
    .await?
    .iter()
    .map(|r| {
        let ns: String = r.try_get("namespace")?;
        let n: i64 = r.try_get("n")?;
        Ok((ns, u64::try_from(n).unwrap_or(0)))
    })
    .collect::<Result<Vec<_>, RegistryError>>()?;
    Ok((
        u64::try_from(skills).unwrap_or(0),
        u64::try_from(namespaces).unwrap_or(0),
        per,
    ))
}

/// The distinct `capabilities` texts of the `latest` versions of
/// `namespace` (empty: all), at most `limit` of them.
pub(crate) async fn capability_sets(
    db: &Db,
    namespace: &str,
    limit: i64,
) -> Result<Vec<String>, RegistryError> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT v.capabilities FROM labels l JOIN versions v \
         ON v.namespace = l.namespace AND v.name = l.name AND v.version = l.version \
         WHERE l.label = 'latest' AND v.capabilities <> '' AND ($1 = '' OR l.namespace = $1) \
         LIMIT $2",
    )
    .bind(namespace.to_owned())
    .bind(limit)
    .fetch_all(db.pool())
    .await?)
}
