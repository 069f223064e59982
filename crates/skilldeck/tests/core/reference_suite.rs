//! The reference validator's own test suite (`skills-ref` 0.1.1,
//! `tests/test_parser.py` and `tests/test_validator.py`), ported case by case
//! onto fixture folders. Each test keeps the reference's name and asserts the
//! same message text, plus our stable code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use skilldeck::{Code, SkillReport, ValidationOptions, check_text, validate_path};

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference")
        .join(rel)
}

fn validate(rel: &str) -> SkillReport {
    validate_path(&fixture(rel), &ValidationOptions::strict())
}

fn errors(r: &SkillReport) -> Vec<String> {
    r.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect()
}

fn has(r: &SkillReport, code: Code, text: &str) -> bool {
    r.diagnostics
        .iter()
        .any(|d| d.is_error() && d.code == code && d.message.contains(text))
}

// ---- test_parser.py ----

#[test]
fn test_valid_frontmatter() {
    let c = check_text(
        "---\nname: my-skill\ndescription: A test skill\n---\n# My Skill\n\nInstructions here.\n",
        None,
        &ValidationOptions::strict(),
    );
    let fm = c.frontmatter.unwrap();
    assert_eq!(fm.name.as_deref(), Some("my-skill"));
    assert_eq!(fm.description.as_deref(), Some("A test skill"));
    assert_eq!(c.body_line, 5);
}

#[test]
fn test_missing_frontmatter() {
    let c = check_text("# No frontmatter here", None, &ValidationOptions::strict());
    let d = &c.diagnostics[0];
    assert_eq!(d.code, Code::NoFrontmatter);
    assert!(d.message.contains("must start with YAML frontmatter"));
}

#[test]
fn test_unclosed_frontmatter() {
    let c = check_text(
        "---\nname: my-skill\ndescription: A test skill\n",
        None,
        &ValidationOptions::strict(),
    );
    assert_eq!(c.diagnostics[0].code, Code::UnclosedFrontmatter);
    assert!(c.diagnostics[0].message.contains("not properly closed"));
}

#[test]
fn test_invalid_yaml() {
    let c = check_text(
        "---\nname: [invalid\ndescription: broken\n---\nBody here\n",
        None,
        &ValidationOptions::strict(),
    );
    assert_eq!(c.diagnostics[0].code, Code::InvalidYaml);
    assert!(c.diagnostics[0].message.contains("Invalid YAML"));
    assert!(c.frontmatter.is_none());
}

#[test]
fn test_non_dict_frontmatter() {
    let c = check_text(
        "---\n- just\n- a\n- list\n---\nBody\n",
        None,
        &ValidationOptions::strict(),
    );
    assert_eq!(c.diagnostics[0].code, Code::FrontmatterNotMapping);
    assert!(c.diagnostics[0].message.contains("must be a YAML mapping"));
}

#[test]
fn test_read_valid_skill() {
    let r = validate("read-valid/my-skill");
    let fm = r.frontmatter.unwrap();
    assert_eq!(fm.name.as_deref(), Some("my-skill"));
    assert_eq!(fm.description.as_deref(), Some("A test skill"));
    assert_eq!(fm.license.as_deref(), Some("MIT"));
}

#[test]
fn test_read_with_metadata() {
    let r = validate("read-metadata/my-skill");
    assert_eq!(
        r.frontmatter.unwrap().metadata,
        vec![
            ("author".to_owned(), "Test Author".to_owned()),
            ("version".to_owned(), "1.0".to_owned())
        ]
    );
}

#[test]
fn test_missing_skill_md_parser() {
    let r = validate("missing-skill-md/my-skill");
    assert!(has(&r, Code::MissingSkillMd, "SKILL.md"));
}

#[test]
fn test_missing_name() {
    let r = validate("missing-name/my-skill");
    assert!(has(
        &r,
        Code::NameMissing,
        "Missing required field in frontmatter: name"
    ));
}

#[test]
fn test_missing_description() {
    let r = validate("missing-description/my-skill");
    assert!(has(
        &r,
        Code::DescriptionMissing,
        "Missing required field in frontmatter: description"
    ));
}

#[test]
fn test_find_skill_md_prefers_uppercase() {
    let r = validate("prefers-uppercase/my-skill");
    assert!(r.skill_md.unwrap().ends_with("SKILL.md"));
    assert_eq!(
        r.frontmatter.unwrap().description.as_deref(),
        Some("uppercase")
    );
}

#[test]
fn test_find_skill_md_accepts_lowercase() {
    let r = validate("lowercase-only/my-skill");
    assert!(r.skill_md.unwrap().ends_with("skill.md"));
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.code == Code::SkillMdLowercase && !d.is_error())
    );
}

#[test]
fn test_find_skill_md_returns_none_when_missing() {
    let r = validate("missing-skill-md/my-skill");
    assert!(r.skill_md.is_none());
}

#[test]
fn test_read_properties_with_lowercase_skill_md() {
    let r = validate("lowercase-only/my-skill");
    assert!(r.valid);
    let fm = r.frontmatter.unwrap();
    assert_eq!(fm.name.as_deref(), Some("my-skill"));
    assert_eq!(fm.description.as_deref(), Some("A test skill"));
}

#[test]
fn test_read_with_allowed_tools() {
    let r = validate("allowed-tools/my-skill");
    assert_eq!(
        r.frontmatter.unwrap().allowed_tools,
        vec!["Bash(jq:*)", "Bash(git:*)"]
    );
}

// ---- test_validator.py ----

#[test]
fn test_valid_skill() {
    let r = validate("valid/my-skill");
    assert_eq!(errors(&r), Vec::<String>::new());
}

#[test]
fn test_nonexistent_path() {
    let r = validate("nonexistent");
    assert_eq!(errors(&r).len(), 1);
    assert!(has(&r, Code::PathNotFound, "does not exist"));
}

#[test]
fn test_not_a_directory() {
    let r = validate("not-a-directory/file.txt");
    assert_eq!(errors(&r).len(), 1);
    assert!(has(&r, Code::NotADirectory, "Not a directory"));
}

#[test]
fn test_missing_skill_md() {
    let r = validate("missing-skill-md/my-skill");
    assert_eq!(errors(&r).len(), 1);
    assert!(has(
        &r,
        Code::MissingSkillMd,
        "Missing required file: SKILL.md"
    ));
}

#[test]
fn test_invalid_name_uppercase() {
    assert!(has(
        &validate("uppercase/MySkill"),
        Code::NameNotLowercase,
        "lowercase"
    ));
}

#[test]
fn test_name_too_long() {
    let r = validate(&format!("too-long/{}", "a".repeat(70)));
    assert!(has(&r, Code::NameTooLong, "exceeds 64 character limit"));
}

#[test]
fn test_name_leading_hyphen() {
    let r = validate("leading-hyphen/-my-skill");
    assert!(has(
        &r,
        Code::NameHyphenEdge,
        "cannot start or end with a hyphen"
    ));
}

#[test]
fn test_name_consecutive_hyphens() {
    let r = validate("consecutive-hyphens/my--skill");
    assert!(has(&r, Code::NameConsecutiveHyphens, "consecutive hyphens"));
}

#[test]
fn test_name_invalid_characters() {
    let r = validate("invalid-chars/my_skill");
    assert!(has(&r, Code::NameInvalidChars, "invalid characters"));
}

#[test]
fn test_name_directory_mismatch() {
    let r = validate("dir-mismatch/wrong-name");
    assert!(has(&r, Code::NameDirMismatch, "must match skill name"));
}

#[test]
fn test_unexpected_fields() {
    let r = validate("unexpected-fields/my-skill");
    assert!(has(
        &r,
        Code::UnknownField,
        "Unexpected fields in frontmatter: unknown_field"
    ));
}

#[test]
fn test_valid_with_all_fields() {
    assert_eq!(
        errors(&validate("all-fields/my-skill")),
        Vec::<String>::new()
    );
}

#[test]
fn test_allowed_tools_accepted() {
    assert_eq!(
        errors(&validate("allowed-tools/my-skill")),
        Vec::<String>::new()
    );
}

#[test]
fn test_i18n_chinese_name() {
    assert_eq!(errors(&validate("i18n-chinese/技能")), Vec::<String>::new());
}

#[test]
fn test_i18n_russian_name_with_hyphens() {
    assert_eq!(
        errors(&validate("i18n-russian-hyphens/мой-навык")),
        Vec::<String>::new()
    );
}

#[test]
fn test_i18n_russian_lowercase_valid() {
    assert_eq!(
        errors(&validate("i18n-russian-lowercase/навык")),
        Vec::<String>::new()
    );
}

#[test]
fn test_i18n_russian_uppercase_rejected() {
    let r = validate("i18n-russian-uppercase/НАВЫК");
    assert!(has(&r, Code::NameNotLowercase, "lowercase"));
}

#[test]
fn test_description_too_long() {
    let r = validate("description-too-long/my-skill");
    assert!(has(&r, Code::DescriptionTooLong, "exceeds 1024"));
}

#[test]
fn test_valid_compatibility() {
    assert_eq!(
        errors(&validate("valid-compatibility/my-skill")),
        Vec::<String>::new()
    );
}

#[test]
fn test_compatibility_too_long() {
    let r = validate("compatibility-too-long/my-skill");
    assert!(has(&r, Code::CompatibilityTooLong, "exceeds 500"));
}

#[test]
fn test_nfkc_normalization() {
    // Folder "café" precomposed, name decomposed (e + U+0301): equal after NFKC.
    assert_eq!(errors(&validate("nfkc/caf\u{e9}")), Vec::<String>::new());
}

// ---- test_prompt.py (the `skills-ref` catalog format) ----

fn skills_ref_prompt(dirs: &[&str]) -> String {
    let options = skilldeck::CatalogOptions {
        format: skilldeck::CatalogFormat::SkillsRef,
        ..skilldeck::CatalogOptions::default()
    };
    let skills: Vec<skilldeck::Skill> = dirs
        .iter()
        .map(|d| {
            let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([fixture(d)]));
            deck.skills()[0].clone()
        })
        .collect();
    let text = skilldeck::render_catalog(&skills, &options, None)
        .unwrap()
        .text;
    // skills-ref's to_prompt() returns the block without the newline its
    // CLI prints; ours is the CLI's output.
    text.strip_suffix('\n').unwrap_or(&text).to_owned()
}

#[test]
fn test_empty_list() {
    assert_eq!(
        skills_ref_prompt(&[]),
        "<available_skills>\n</available_skills>"
    );
}

#[test]
fn test_single_skill() {
    let result = skills_ref_prompt(&["prompt/single"]);
    assert!(result.contains("<available_skills>"));
    assert!(result.contains("</available_skills>"));
    assert!(result.contains("<name>\nmy-skill\n</name>"));
    assert!(result.contains("<description>\nA test skill\n</description>"));
    assert!(result.contains("<location>"));
    assert!(result.contains("SKILL.md"));
}

#[test]
fn test_multiple_skills() {
    let result = skills_ref_prompt(&["prompt/multiple-a", "prompt/multiple-b"]);
    assert_eq!(result.matches("<skill>").count(), 2);
    assert_eq!(result.matches("</skill>").count(), 2);
    assert!(result.contains("skill-a"));
    assert!(result.contains("skill-b"));
}

#[test]
fn test_special_characters_escaped() {
    let result = skills_ref_prompt(&["prompt/special"]);
    assert!(result.contains("&lt;foo&gt;"));
    assert!(result.contains("&amp;"));
    assert!(result.contains("&lt;bar&gt;"));
    assert!(!result.contains("<foo>"));
    assert!(!result.contains("<bar>"));
}
