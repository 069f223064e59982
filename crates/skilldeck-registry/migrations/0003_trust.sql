-- Trust for fleets (issue 25).
-- Review before release: a version published into a namespace that
-- requires review is `pending` until a reviewer approves it (`released`)
-- or rejects it (`rejected`); only released versions resolve for agents,
-- carry labels or become `latest`. Versions published before this
-- migration are released.
ALTER TABLE versions ADD COLUMN review_state TEXT NOT NULL DEFAULT 'released';
ALTER TABLE versions ADD COLUMN reviewed_by TEXT;
ALTER TABLE versions ADD COLUMN reviewed_at TEXT;
ALTER TABLE versions ADD COLUMN review_reason TEXT;
-- Blocked by an admin (e.g. found malicious after release): like a yank,
-- and agents can no longer download it.
ALTER TABLE versions ADD COLUMN blocked_reason TEXT;
ALTER TABLE versions ADD COLUMN blocked_at TEXT;
-- The static risk audit at publish: the verdict (`clean`, `low` ...
-- `critical`; NULL for versions published before the audit existed) and
-- the findings as JSON.
ALTER TABLE versions ADD COLUMN audit_verdict TEXT;
ALTER TABLE versions ADD COLUMN audit_findings TEXT;
-- The SSH signature uploaded with the version (armored sshsig over the
-- fingerprint text) and the signer's key fingerprint (`SHA256:...`).
ALTER TABLE versions ADD COLUMN signature TEXT;
ALTER TABLE versions ADD COLUMN signer TEXT;
-- What a namespace requires of its versions.
CREATE TABLE namespace_policies (
    namespace TEXT PRIMARY KEY,
    require_review BIGINT NOT NULL,
    require_signature BIGINT NOT NULL,
    updated_at TEXT NOT NULL
);
-- The SSH keys allowed to sign a namespace's versions.
CREATE TABLE namespace_signers (
    namespace TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    public_key TEXT NOT NULL,
    added_by TEXT NOT NULL,
    added_at TEXT NOT NULL,
    PRIMARY KEY (namespace, fingerprint)
);
