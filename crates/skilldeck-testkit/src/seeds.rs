//! Skills the seed documents write out in full, verbatim, under
//! `fixtures/seeds/` (shared with the Python and Node tests, which read the
//! same files): each must load as written (the tests that load them pin
//! that).

/// Seed 002 (Orion, a TypeScript agent host): its `deep-research` skill's
/// `SKILL.md`, as the seed prints it. Its tool has no `run` (the host
/// implements it), and `sources` uses the `items: string` shorthand.
pub const SEED_002_DEEP_RESEARCH: &str =
    include_str!("../fixtures/seeds/002-deep-research/SKILL.md");
