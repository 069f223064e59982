-- Failed authentications counted across replicas (issue 29): one row per
-- throttle key and fixed window. `key` is the SHA-256 hex of the key
-- ("addr:<client address>" or "prefix:<first characters of a presented
-- token>"), never the text; `window_start` is the window's start in Unix
-- seconds (a multiple of the window, so every replica counts into the
-- same row). Rows of past windows are deleted by the replicas.
CREATE TABLE auth_failures (
    key TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    failures BIGINT NOT NULL,
    PRIMARY KEY (key, window_start)
);
