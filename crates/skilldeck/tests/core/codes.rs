//! One test per diagnostic code: a fixture that breaks exactly that rule,
//! the code it must produce, and its severity in each mode.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use skilldeck::{Code, Diagnostic, Mode, Severity, ValidationOptions, validate_path};

fn fixture_dir(code: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codes")
        .join(code);
    // Each code folder holds exactly one skill folder.
    let mut entries: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert_eq!(entries.len(), 1, "{}", root.display());
    entries.remove(0)
}

fn find(code: Code, mode: Mode) -> Diagnostic {
    let options = ValidationOptions {
        mode,
        ..ValidationOptions::default()
    };
    let report = validate_path(&fixture_dir(code.as_str()), &options);
    report
        .diagnostics
        .iter()
        .find(|d| d.code == code)
        .cloned()
        .unwrap_or_else(|| panic!("{code} not reported: {:#?}", report.diagnostics))
}

/// `code!(test_name, Code::X, strict severity, lenient severity)`.
macro_rules! code {
    ($test:ident, $code:expr, $strict:ident, $lenient:ident) => {
        #[test]
        fn $test() {
            let strict = find($code, Mode::Strict);
            assert_eq!(strict.severity, Severity::$strict, "strict: {strict}");
            assert!(strict.file.is_some(), "{strict}");
            let lenient = find($code, Mode::Lenient);
            assert_eq!(lenient.severity, Severity::$lenient, "lenient: {lenient}");
        }
    };
}

code!(
    missing_skill_md_is_an_error,
    Code::MissingSkillMd,
    Error,
    Error
);
code!(
    skill_md_lowercase_is_a_warning,
    Code::SkillMdLowercase,
    Warning,
    Warning
);
code!(bom_is_tolerated_with_a_warning, Code::Bom, Warning, Warning);
code!(
    no_frontmatter_makes_a_skill_unloadable,
    Code::NoFrontmatter,
    Error,
    Error
);
code!(
    unclosed_frontmatter_makes_a_skill_unloadable,
    Code::UnclosedFrontmatter,
    Error,
    Error
);
code!(
    invalid_yaml_makes_a_skill_unloadable,
    Code::InvalidYaml,
    Error,
    Error
);
code!(
    frontmatter_must_be_a_mapping,
    Code::FrontmatterNotMapping,
    Error,
    Error
);
code!(
    unknown_field_is_strict_error_lenient_warning,
    Code::UnknownField,
    Error,
    Warning
);
code!(
    name_missing_is_strict_error_lenient_warning,
    Code::NameMissing,
    Error,
    Warning
);
code!(
    name_empty_is_strict_error_lenient_warning,
    Code::NameEmpty,
    Error,
    Warning
);
code!(name_must_be_a_string, Code::NameNotString, Error, Warning);
code!(name_over_64_chars, Code::NameTooLong, Error, Warning);
code!(
    name_must_be_lowercase,
    Code::NameNotLowercase,
    Error,
    Warning
);
code!(
    name_no_hyphen_at_edges,
    Code::NameHyphenEdge,
    Error,
    Warning
);
code!(
    name_no_consecutive_hyphens,
    Code::NameConsecutiveHyphens,
    Error,
    Warning
);
code!(
    name_letters_digits_hyphens_only,
    Code::NameInvalidChars,
    Error,
    Warning
);
code!(
    name_must_match_folder,
    Code::NameDirMismatch,
    Error,
    Warning
);
code!(
    description_missing_makes_a_skill_unloadable,
    Code::DescriptionMissing,
    Error,
    Error
);
code!(
    description_empty_makes_a_skill_unloadable,
    Code::DescriptionEmpty,
    Error,
    Error
);
code!(
    description_must_be_a_string,
    Code::DescriptionNotString,
    Error,
    Error
);
code!(
    description_over_1024_chars,
    Code::DescriptionTooLong,
    Error,
    Warning
);
code!(
    compatibility_must_not_be_empty,
    Code::CompatibilityEmpty,
    Error,
    Warning
);
code!(
    compatibility_over_500_chars,
    Code::CompatibilityTooLong,
    Error,
    Warning
);
code!(
    compatibility_must_be_a_string,
    Code::CompatibilityNotString,
    Error,
    Warning
);
code!(
    license_must_be_a_string,
    Code::LicenseNotString,
    Error,
    Warning
);
code!(metadata_must_be_a_map, Code::MetadataNotMap, Error, Warning);
code!(
    metadata_values_must_be_strings,
    Code::MetadataValueNotString,
    Error,
    Warning
);
code!(
    allowed_tools_must_be_a_string,
    Code::AllowedToolsNotString,
    Error,
    Warning
);
code!(
    control_characters_in_text_fields_are_errors_in_strict_warnings_in_lenient,
    Code::ControlCharacter,
    Error,
    Warning
);

#[test]
fn control_characters_are_reported_in_every_text_field() {
    let text = "---\nname: \"a\\nb\"\ndescription: \"Bell \\a. Use when testing.\"\ncompatibility: \"x \\u202e y\"\nlicense: \"MIT\\0\"\nmetadata:\n  author: \"esc \\e[2J\"\n---\nbody\n";
    let checked = skilldeck::check_text(text, None, &ValidationOptions::lenient());
    let fields: Vec<&str> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::ControlCharacter)
        .map(|d| d.message.split('\'').nth(1).unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "name",
            "description",
            "compatibility",
            "license",
            "metadata.author"
        ],
        "{:#?}",
        checked.diagnostics
    );
    assert!(
        checked
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::ControlCharacter)
            .all(|d| d.severity == Severity::Warning)
    );
}
code!(
    not_utf8_makes_a_skill_unloadable,
    Code::NotUtf8,
    Error,
    Error
);
code!(
    body_over_500_lines_is_a_lint,
    Code::BodyTooLong,
    Warning,
    Warning
);
code!(
    body_over_5000_tokens_is_a_lint,
    Code::BodyTooManyTokens,
    Warning,
    Warning
);
code!(
    link_to_missing_file_is_a_lint,
    Code::BrokenLink,
    Warning,
    Warning
);
code!(
    reference_chain_deeper_than_one_is_a_lint,
    Code::NestedReference,
    Warning,
    Warning
);
code!(
    description_without_when_is_a_lint,
    Code::DescriptionNoTrigger,
    Warning,
    Warning
);

#[test]
fn yaml_recovered_only_in_lenient_mode() {
    let lenient = find(Code::YamlRecovered, Mode::Lenient);
    assert_eq!(lenient.severity, Severity::Warning);
    assert_eq!(lenient.line, Some(3));
    assert!(
        lenient
            .help
            .as_deref()
            .unwrap()
            .contains("\"Use when: the user asks about colons\"")
    );
    let options = ValidationOptions::lenient();
    let report = validate_path(&fixture_dir("yaml-recovered"), &options);
    assert!(report.valid);
    assert_eq!(
        report.frontmatter.unwrap().description.as_deref(),
        Some("Use when: the user asks about colons")
    );

    let strict = validate_path(&fixture_dir("yaml-recovered"), &ValidationOptions::strict());
    assert!(!strict.valid);
    let d = strict
        .diagnostics
        .iter()
        .find(|d| d.code == Code::InvalidYaml)
        .unwrap();
    assert_eq!(d.line, Some(3));
    assert!(
        d.help.as_deref().unwrap().contains("must be quoted"),
        "{d:?}"
    );
}

#[test]
fn every_code_has_a_unique_kebab_case_text() {
    let mut seen = std::collections::HashSet::new();
    for code in Code::ALL {
        let s = code.as_str();
        assert!(seen.insert(s), "duplicate {s}");
        assert!(
            s.chars()
                .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit()),
            "{s}"
        );
    }
}

#[test]
fn diagnostics_point_at_the_real_file_line() {
    let d = find(Code::NameDirMismatch, Mode::Strict);
    assert_eq!((d.line, d.column), (Some(2), Some(7)));
    let d = find(Code::UnknownField, Mode::Strict);
    assert_eq!((d.line, d.column), (Some(4), Some(1)));
    // Type errors point at the key: a block list's first item is on a later line.
    let d = find(Code::AllowedToolsNotString, Mode::Strict);
    assert_eq!((d.line, d.column), (Some(4), Some(1)));
    let d = find(Code::MetadataValueNotString, Mode::Strict);
    assert_eq!((d.line, d.column), (Some(5), Some(3)));
    let d = find(Code::BrokenLink, Mode::Strict);
    assert_eq!((d.line, d.column), (Some(5), Some(17)));
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = "---\nname: Bad_Name-\ndescription: \"\"\ncompatibility: \"\"\nextra: 1\n---\n";
    let c = skilldeck::check_text(text, None, &ValidationOptions::strict());
    let codes: Vec<Code> = c.diagnostics.iter().map(|d| d.code).collect();
    for expected in [
        Code::NameNotLowercase,
        Code::NameHyphenEdge,
        Code::NameInvalidChars,
        Code::DescriptionEmpty,
        Code::CompatibilityEmpty,
        Code::UnknownField,
    ] {
        assert!(
            codes.contains(&expected),
            "{expected} missing from {codes:?}"
        );
    }
}

#[test]
fn allowed_field_admits_an_extra_field_in_strict_mode() {
    let options = ValidationOptions {
        allowed_fields: vec!["author".into()],
        ..ValidationOptions::strict()
    };
    let report = validate_path(&fixture_dir("unknown-field"), &options);
    assert!(report.valid, "{:#?}", report.diagnostics);
}

#[test]
fn lenient_mode_loads_known_host_fields_silently() {
    let text = "---\nname: x\ndescription: Use when testing.\nargument-hint: \"[file]\"\ndisable-model-invocation: true\n---\n";
    let c = skilldeck::check_text(text, None, &ValidationOptions::lenient());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let c = skilldeck::check_text(text, None, &ValidationOptions::strict());
    assert_eq!(
        c.diagnostics
            .iter()
            .filter(|d| d.code == Code::UnknownField)
            .count(),
        2
    );
}

#[test]
fn ascii_names_rejects_unicode_letters() {
    let options = ValidationOptions {
        charset: skilldeck::NameCharset::Ascii,
        ..ValidationOptions::strict()
    };
    let c = skilldeck::check_text(
        "---\nname: навык\ndescription: Use when testing.\n---\n",
        None,
        &options,
    );
    assert!(
        c.diagnostics
            .iter()
            .any(|d| d.code == Code::NameInvalidChars)
    );
}

#[test]
fn null_description_counts_as_missing() {
    let c = skilldeck::check_text(
        "---\nname: x\ndescription: null\n---\n",
        None,
        &ValidationOptions::lenient(),
    );
    assert_eq!(c.diagnostics[0].code, Code::DescriptionMissing);
}

#[test]
fn plain_scalar_name_keeps_source_text() {
    let c = skilldeck::check_text(
        "---\nname: 123\ndescription: Use when testing.\nmetadata:\n  version: 1.0\n---\n",
        None,
        &ValidationOptions::strict(),
    );
    let fm = c.frontmatter.unwrap();
    assert_eq!(fm.name.as_deref(), Some("123"));
    assert_eq!(fm.metadata, vec![("version".into(), "1.0".into())]);
}

#[test]
fn flow_style_anchors_and_tags_are_accepted() {
    let c = skilldeck::check_text(
        "---\nname: &n x\ndescription: !!str Use when testing.\nmetadata: {a: \"1\", b: *n}\n---\n",
        None,
        &ValidationOptions::strict(),
    );
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
}

#[test]
fn complete_valid_skill_has_no_diagnostics() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid/complete-skill");
    let report = validate_path(&dir, &ValidationOptions::strict());
    assert!(report.diagnostics.is_empty(), "{:#?}", report.diagnostics);
}

code!(
    placeholder_text_fails_strict_validation,
    Code::PlaceholderText,
    Error,
    Warning
);

#[test]
fn placeholder_text_is_reported_in_the_description_and_the_body() {
    let report = validate_path(
        &fixture_dir("placeholder-text"),
        &ValidationOptions::strict(),
    );
    let lines: Vec<Option<u32>> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::PlaceholderText)
        .map(|d| d.line)
        .collect();
    assert_eq!(lines, [Some(3), Some(8)]);
    let prose = skilldeck::check_text(
        "---\nname: x\ndescription: \"Use when a TODO: list needs sorting.\"\n---\nKeep a TODO: list.\n",
        None,
        &ValidationOptions::strict(),
    );
    assert!(prose.diagnostics.is_empty(), "{:?}", prose.diagnostics);
}

#[test]
fn allow_silences_a_code_and_deny_makes_it_an_error() {
    let text = "---\nname: x\ndescription: Formats tables.\n---\n";
    let plain = skilldeck::check_text(text, None, &ValidationOptions::strict());
    assert_eq!(plain.diagnostics[0].code, Code::DescriptionNoTrigger);
    assert_eq!(plain.diagnostics[0].severity, Severity::Warning);

    let allowed = ValidationOptions {
        allow: vec![Code::DescriptionNoTrigger],
        ..ValidationOptions::strict()
    };
    assert!(
        skilldeck::check_text(text, None, &allowed)
            .diagnostics
            .is_empty()
    );

    let denied = ValidationOptions {
        allow: vec![Code::DescriptionNoTrigger],
        deny: vec![Code::DescriptionNoTrigger],
        ..ValidationOptions::strict()
    };
    let c = skilldeck::check_text(text, None, &denied);
    assert_eq!(c.diagnostics[0].severity, Severity::Error, "deny wins");
    assert!(c.diagnostics.iter().any(skilldeck::Diagnostic::is_error));
}

#[test]
fn quiet_drops_warnings_and_keeps_errors() {
    let options = ValidationOptions {
        quiet: true,
        ..ValidationOptions::strict()
    };
    let c = skilldeck::check_text(
        "---\nname: X\ndescription: Formats tables.\n---\n",
        None,
        &options,
    );
    let codes: Vec<Code> = c.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::NameNotLowercase]);
}

#[test]
fn codes_that_make_a_skill_unusable_cannot_be_allowed() {
    assert!(!ValidationOptions::can_allow(Code::NoFrontmatter));
    assert!(ValidationOptions::can_allow(Code::BrokenLink));
    let options = ValidationOptions {
        allow: vec![Code::DescriptionMissing],
        ..ValidationOptions::lenient()
    };
    let c = skilldeck::check_text("---\nname: x\n---\n", None, &options);
    assert_eq!(c.diagnostics[0].code, Code::DescriptionMissing);
    assert_eq!(c.diagnostics[0].severity, Severity::Error);
}

#[test]
fn name_fixits_are_valid_names() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("PDF_Tools");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: PDF_Tools\ndescription: Use when testing.\n---\n",
    )
    .unwrap();
    let report = validate_path(&folder, &ValidationOptions::strict());
    for d in &report.diagnostics {
        let help = d.help.as_deref().unwrap_or_default();
        assert!(!help.contains("PDF_Tools`"), "{d:?}");
    }
    let mismatch = report
        .diagnostics
        .iter()
        .find(|d| d.code == Code::NameDirMismatch);
    // Folder and name are equal here; the name rules give the fix.
    assert!(mismatch.is_none());
    let lower = report
        .diagnostics
        .iter()
        .find(|d| d.code == Code::NameNotLowercase)
        .unwrap();
    assert_eq!(lower.help.as_deref(), Some("use `name: pdf-tools`"));

    let c = skilldeck::check_text(
        "---\nname: My Skill\ndescription: Use when testing.\n---\n",
        Some(std::path::Path::new("/x/My_Skill")),
        &ValidationOptions::strict(),
    );
    let d = c
        .diagnostics
        .iter()
        .find(|d| d.code == Code::NameDirMismatch)
        .unwrap();
    assert_eq!(
        d.help.as_deref(),
        Some("rename the folder to `my-skill` and set `name: my-skill`")
    );
}

#[test]
fn validating_a_folder_of_skills_suggests_recursive() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        skilldeck_testkit::skill(dir.path(), name)
            .description("Use when testing.")
            .write();
    }
    let report = validate_path(dir.path(), &ValidationOptions::strict());
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::MissingSkillMd);
    let help = d.help.as_deref().unwrap();
    assert!(help.contains("2 skill folders found below it"), "{help}");
    assert!(help.contains("validate -r"), "{help}");
}
