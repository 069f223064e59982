-- Consistency across replicas (issue 29): the generation of the last write
-- that touched each scope of the in-process caches (`all`, `skills`,
-- `tokens`, `agent:<id>`). Every write records its scopes here in its own
-- transaction (and, on PostgreSQL, sends them with NOTIFY); a replica that
-- missed notifications reads the scopes changed since the last generation
-- it applied and drops exactly what they cover.
CREATE TABLE generations (
    scope TEXT PRIMARY KEY,
    generation BIGINT NOT NULL
);
