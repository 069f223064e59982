-- Web UI sessions shared by every replica (issue 29): a session signed in
-- on one replica is used, and ended, on any other. The row is keyed by the
-- SHA-256 hex of the session id (the cookie value is never stored), holds
-- the principal the sign-in produced (a token's id, name and scopes, or an
-- SSO user's; never a token) and how it signed in. Expiry is checked on
-- every read (idle and absolute age); expired rows are swept at sign-in.
CREATE TABLE ui_sessions (
    id_hash TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL,
    principal_name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    -- `token` or `oidc`.
    method TEXT NOT NULL,
    -- An SSO sign-in's subject and email (NULL for a token sign-in).
    subject TEXT,
    email TEXT,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    -- A one-shot message for the next page (taken when read).
    flash TEXT
);
CREATE INDEX ui_sessions_last_seen ON ui_sessions (last_seen_at);
-- Keys the UI's replicas share: the one that signs the sign-in form's
-- cookie, the SSO state cookie and derives each session's CSRF token.
-- Made once by whichever replica needs it first (insert if absent).
CREATE TABLE ui_keys (
    name TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL
);
