//! Seed 004 (LinX) frontmatter: `skill_type`, top-level
//! `required_capabilities` and `entry_points` (each a skill tool named by
//! the core's rule), read by lenient validation as host fields, reported by
//! strict validation with the spec's forms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use skilldeck::spec::entry_point_schema;
use skilldeck::{
    Code, Diagnostic, DiscoveryOptions, Mode, Severity, SkillType, ToolCall, ValidationOptions,
    check_text, discover, validate_path,
};
use skilldeck_testkit::Root;
use skilldeck_testkit::seeds::{SEED_004_WEATHER_FORECAST, copy_seed_004, seed_004_dir};

use crate::common::options;

fn frontmatter(dir: &Path, mode: Mode) -> (skilldeck::Frontmatter, Vec<Diagnostic>) {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let checked = check_text(&text, Some(dir), &options(mode));
    (checked.frontmatter.unwrap(), checked.diagnostics)
}

fn codes(diags: &[Diagnostic]) -> Vec<Code> {
    diags.iter().map(|d| d.code).collect()
}

#[test]
fn seed_004_weather_forecast_as_written_has_two_entry_point_tools() {
    let dir = seed_004_dir().join("weather_forecast");
    let (fm, diags) = frontmatter(&dir, Mode::Lenient);
    // The seed's name has an underscore: outside the spec's charset, a
    // warning in lenient mode; nothing about its seed 004 fields.
    assert_eq!(codes(&diags), vec![Code::NameInvalidChars], "{diags:#?}");
    assert_eq!(fm.skill_type, Some(SkillType::AgentSkill));
    assert_eq!(fm.capabilities, vec!["weather".to_owned()]);
    let tools: Vec<(String, &str, &str)> = fm
        .tools
        .iter()
        .map(|t| {
            (
                t.full_name("weather_forecast"),
                t.run.as_deref().unwrap(),
                t.description.as_str(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        vec![
            (
                "weather_forecast__get_current".to_owned(),
                "get_weather.py",
                "Get current weather"
            ),
            (
                "weather_forecast__get_forecast".to_owned(),
                "forecast.py",
                "Get 7-day forecast"
            ),
        ]
    );
    for tool in &fm.tools {
        assert_eq!(tool.call, ToolCall::EntryPoint);
        assert_eq!(tool.input_schema, entry_point_schema());
        assert!(tool.line > 0);
    }
    // The fixture is the seed's text: the testkit constant is this file.
    assert_eq!(
        std::fs::read_to_string(dir.join("SKILL.md")).unwrap(),
        SEED_004_WEATHER_FORECAST
    );
}

#[test]
fn a_deck_loads_seed_004_weather_forecast_with_its_type_and_tools() {
    let root = Root::new();
    copy_seed_004("weather_forecast", root.path());
    let deck = discover(&DiscoveryOptions::with_roots([root.path().to_path_buf()]));
    let skill = deck.get("weather_forecast").expect("loaded");
    assert_eq!(skill.skill_type(), Some(SkillType::AgentSkill));
    let names: Vec<&str> = skill.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_current", "get_forecast"]);
    // Discovery reads the frontmatter only, and the body too for entry
    // points' descriptions.
    assert_eq!(skill.tools()[0].description, "Get current weather");
    assert!(
        deck.diagnostics()
            .iter()
            .all(|d| d.code != Code::UnknownField),
        "{:#?}",
        deck.diagnostics()
    );
}

#[test]
fn strict_mode_reports_seed_004_fields_with_the_specs_forms() {
    let dir = seed_004_dir().join("weather_forecast");
    let diags = validate_path(&dir, &options(Mode::Strict)).diagnostics;
    let unknown: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| d.code == Code::UnknownField)
        .collect();
    assert_eq!(unknown.len(), 3, "{diags:#?}");
    let help_of = |field: &str| {
        unknown
            .iter()
            .find(|d| d.message.contains(field))
            .and_then(|d| d.help.clone())
            .unwrap_or_else(|| panic!("{field} not reported: {diags:#?}"))
    };
    assert!(help_of("entry_points").contains("`tools:`"));
    assert!(help_of("required_capabilities").contains("metadata: {capabilities"));
    assert!(help_of("skill_type").contains("langchain_tool"));
    assert!(unknown.iter().all(|d| d.severity == Severity::Error));
    let admitted = ValidationOptions {
        allowed_fields: vec![
            "entry_points".to_owned(),
            "skill_type".to_owned(),
            "required_capabilities".to_owned(),
        ],
        ..options(Mode::Strict)
    };
    let rest = validate_path(&dir, &admitted).diagnostics;
    assert_eq!(codes(&rest), vec![Code::NameInvalidChars], "{rest:#?}");
}

fn entry_skill(root: &Root, yaml: &str) -> std::path::PathBuf {
    root.skill("ep")
        .description("Entry points. Use when testing.")
        .frontmatter_raw(yaml)
        .file("run.py", "print(1)\n")
        .write()
}

#[test]
fn an_entry_point_whose_script_is_missing_or_escapes_is_left_out() {
    let root = Root::new();
    let dir = entry_skill(
        &root,
        "entry_points:\n  ok: run.py\n  gone: missing.py\n  out: ../ep/../../etc/passwd\n",
    );
    let (fm, diags) = frontmatter(&dir, Mode::Lenient);
    let names: Vec<&str> = fm.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    let found = codes(&diags);
    assert!(found.contains(&Code::ToolRunNotFound), "{diags:#?}");
    assert!(found.contains(&Code::ToolRunEscapes), "{diags:#?}");
    assert!(diags.iter().all(|d| d.severity == Severity::Warning));
}

#[test]
fn entry_point_names_follow_the_tool_name_rule_and_are_unique_among_tools() {
    let root = Root::new();
    let dir = entry_skill(
        &root,
        "tools:\n  - name: go\n    description: Go.\n    run: run.py\nentry_points:\n  go: run.py\n  Bad-Name: run.py\n  fine: {run: run.py, description: Runs fine.}\n",
    );
    let (fm, diags) = frontmatter(&dir, Mode::Lenient);
    let names: Vec<(&str, &str)> = fm
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert_eq!(names, [("go", "Go."), ("fine", "Runs fine.")]);
    let found = codes(&diags);
    assert!(found.contains(&Code::ToolNameDuplicate), "{diags:#?}");
    let bad = diags
        .iter()
        .find(|d| d.code == Code::ToolNameInvalid)
        .expect("bad name reported");
    assert_eq!(bad.help.as_deref(), Some("use `name: bad_name`"));
}

#[test]
fn entry_points_that_are_not_a_mapping_are_reported_and_offer_nothing() {
    let root = Root::new();
    let dir = entry_skill(&root, "entry_points: [run.py]\n");
    let (fm, diags) = frontmatter(&dir, Mode::Lenient);
    assert!(fm.tools.is_empty());
    assert_eq!(codes(&diags), vec![Code::ToolEntryPointsInvalid]);
    let root2 = Root::new();
    let dir = entry_skill(&root2, "entry_points:\n  go: {script: run.py}\n");
    let (fm, diags) = frontmatter(&dir, Mode::Lenient);
    assert!(fm.tools.is_empty());
    assert!(codes(&diags).contains(&Code::ToolEntryPointsInvalid));
}

#[test]
fn an_entry_point_without_a_body_line_gets_a_description_naming_its_script() {
    let root = Root::new();
    let dir = entry_skill(&root, "entry_points:\n  go: run.py\n");
    let (fm, _) = frontmatter(&dir, Mode::Lenient);
    assert!(
        fm.tools[0].description.contains("run.py"),
        "{}",
        fm.tools[0].description
    );
}

#[test]
fn required_capabilities_merge_with_metadata_capabilities() {
    let root = Root::new();
    let dir = entry_skill(
        &root,
        "required_capabilities: [weather, location]\nmetadata:\n  capabilities: \"gpu, weather\"\n",
    );
    let (fm, diags) = frontmatter(&dir, Mode::Lenient);
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(fm.capabilities, ["gpu", "location", "weather"]);
    let root2 = Root::new();
    let dir = entry_skill(&root2, "required_capabilities: {a: b}\n");
    let (_, diags) = frontmatter(&dir, Mode::Lenient);
    assert_eq!(codes(&diags), vec![Code::CapabilitiesInvalid]);
}

#[test]
fn skill_type_is_agent_skill_or_langchain_tool() {
    let root = Root::new();
    let dir = entry_skill(&root, "skill_type: langchain_tool\n");
    let (fm, _) = frontmatter(&dir, Mode::Lenient);
    assert_eq!(fm.skill_type, Some(SkillType::LangchainTool));
    let root2 = Root::new();
    let dir = entry_skill(&root2, "skill_type: plugin\n");
    let (fm, diags) = frontmatter(&dir, Mode::Lenient);
    assert_eq!(fm.skill_type, None);
    assert_eq!(codes(&diags), vec![Code::SkillTypeInvalid]);
    assert_eq!(diags[0].severity, Severity::Warning);
}
