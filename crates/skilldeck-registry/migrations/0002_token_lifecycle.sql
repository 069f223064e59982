-- Token lifecycle (issue 22): expiry, revocation, last use, and where a
-- token came from (`api`, or `admin-file`: the admin token file, whose
-- replacement at start-up revokes the previous one). Revoked tokens stay
-- (for the list and the audit trail) and are refused with 401.
ALTER TABLE tokens ADD COLUMN source TEXT NOT NULL DEFAULT 'api';
ALTER TABLE tokens ADD COLUMN expires_at TEXT;
ALTER TABLE tokens ADD COLUMN last_used_at TEXT;
ALTER TABLE tokens ADD COLUMN revoked_at TEXT;
-- Tokens registered from the admin token file before this migration were
-- named `admin-file` by the registry.
UPDATE tokens SET source = 'admin-file' WHERE name = 'admin-file' AND scopes = 'admin';
