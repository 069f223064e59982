-- Issue 31: the resolution of a skill's declared dependencies made when the
-- version was published (JSON: a list of environment records, each package
-- pinned by hash), what every consumer installs exactly. Written once with
-- the version, never updated (versions are immutable). NULL: published
-- without one.
ALTER TABLE versions ADD COLUMN environments TEXT;
