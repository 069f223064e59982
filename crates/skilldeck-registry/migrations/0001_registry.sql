-- One schema for SQLite and PostgreSQL: TEXT and BIGINT only (booleans are
-- 0/1, timestamps RFC 3339 text in UTC, JSON as text), natural keys, no
-- autoincrement (ids come from registry_state.generation).

CREATE TABLE registry_state (
    id BIGINT PRIMARY KEY,
    generation BIGINT NOT NULL
);
INSERT INTO registry_state (id, generation) VALUES (1, 0);

CREATE TABLE skills (
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (namespace, name)
);

CREATE TABLE versions (
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    archive_sha256 TEXT NOT NULL,
    archive_size BIGINT NOT NULL,
    size BIGINT NOT NULL,
    description TEXT NOT NULL,
    capabilities TEXT NOT NULL,
    frontmatter TEXT NOT NULL,
    skill_md TEXT NOT NULL,
    report TEXT NOT NULL,
    published_by TEXT NOT NULL,
    published_at TEXT NOT NULL,
    yanked_reason TEXT,
    yanked_at TEXT,
    deprecated_reason TEXT,
    deprecated_at TEXT,
    PRIMARY KEY (namespace, name, version)
);

CREATE TABLE version_files (
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    path TEXT NOT NULL,
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    executable BIGINT NOT NULL,
    PRIMARY KEY (namespace, name, version, path)
);
CREATE INDEX version_files_sha256 ON version_files (sha256);

CREATE TABLE labels (
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    label TEXT NOT NULL,
    version TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (namespace, name, label)
);
CREATE INDEX labels_label ON labels (label);

CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE assignments (
    agent TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent, namespace, name)
);

CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE audit (
    id BIGINT PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT NOT NULL
);
