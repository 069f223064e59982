//! Skills the seed documents write out in full, verbatim, under
//! `fixtures/seeds/` (shared with the Python and Node tests, which read the
//! same files): each must load as written (the tests that load them pin
//! that).

/// Seed 002 (Orion, a TypeScript agent host): its `deep-research` skill's
/// `SKILL.md`, as the seed prints it. Its tool has no `run` (the host
/// implements it), and `sources` uses the `items: string` shorthand.
pub const SEED_002_DEEP_RESEARCH: &str =
    include_str!("../fixtures/seeds/002-deep-research/SKILL.md");

/// Seed 004 (LinX): its `weather_forecast` agent skill's `SKILL.md`, as the
/// seed prints it (`skill_type`, top-level `required_capabilities`,
/// `entry_points`); the two scripts beside it are skilldeck's own.
pub const SEED_004_WEATHER_FORECAST: &str =
    include_str!("../fixtures/seeds/004/weather_forecast/SKILL.md");

/// The folder holding seed 004's skills: `weather_forecast` (the seed's
/// agent skill, with skilldeck's own `get_weather.py` and `forecast.py`)
/// and `weather-tool` (a LangChain tool package in the seed's layout,
/// skilldeck's own: a `BaseTool` subclass with a pydantic model, and a
/// `@tool` function reporting its uid and whether it reaches a port).
pub fn seed_004_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds/004")
}

/// Copies seed 004's skill `name` (a folder of [`seed_004_dir`]) into
/// `root`, so a test's deck holds exactly the skills it copies; returns the
/// copy's folder.
pub fn copy_seed_004(name: &str, root: &std::path::Path) -> std::path::PathBuf {
    let from = seed_004_dir().join(name);
    let to = root.join(name);
    std::fs::create_dir_all(&to).unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(&from).unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_file() {
            std::fs::copy(&path, to.join(entry.file_name()))
                .unwrap_or_else(|e| panic!("cannot copy {}: {e}", path.display()));
        }
    }
    to
}
