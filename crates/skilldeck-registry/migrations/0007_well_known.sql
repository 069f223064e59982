-- The agentskills.io well-known index (issue 30): the sha256 of each
-- version's archive as the index serves it (its files at the archive's
-- root, deterministic, rebuilt from the canonical archive on download).
-- NULL for versions published before this column: filled in the first
-- time the index lists them.
ALTER TABLE versions ADD COLUMN root_archive_sha256 TEXT;
