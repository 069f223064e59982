//! Property tests: no input makes the parser panic, every diagnostic points
//! inside the file, and the splitter's line bookkeeping is exact.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use skilldeck::{ValidationOptions, check_text, spec};

/// YAML-flavoured text: the characters that drive the scanner into its
/// corners (indicators, quotes, anchors, tags, colons, newlines, tabs).
fn yamlish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("\n".to_owned()),
            Just("  ".to_owned()),
            Just(": ".to_owned()),
            Just("- ".to_owned()),
            Just("---".to_owned()),
            Just("name: ".to_owned()),
            Just("description: ".to_owned()),
            Just("metadata:\n  ".to_owned()),
            "[\\[\\]{}&*!|>'\"#%@`,?~\\\\\t]".prop_map(|s| s),
            "[a-z0-9 ]{1,8}",
            any::<char>().prop_map(|c| c.to_string()),
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

fn line_count(text: &str) -> u32 {
    u32::try_from(text.split('\n').count()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        for options in [ValidationOptions::strict(), ValidationOptions::lenient()] {
            let c = check_text(&text, None, &options);
            for d in &c.diagnostics {
                prop_assert!(d.line.unwrap_or(1) <= line_count(&text).max(1));
            }
        }
    }

    #[test]
    fn yamlish_frontmatter_never_panics_and_positions_stay_in_file(
        yaml in yamlish(),
        body in "[a-z\\n\\[\\]()/.]{0,40}",
    ) {
        let text = format!("---\n{yaml}\n---\n{body}");
        for options in [ValidationOptions::strict(), ValidationOptions::lenient()] {
            let c = check_text(&text, None, &options);
            for d in &c.diagnostics {
                let line = d.line.unwrap_or(1);
                prop_assert!(line >= 1 && line <= line_count(&text), "{d:?} in {text:?}");
                prop_assert!(d.column.unwrap_or(1) >= 1);
            }
        }
    }

    #[test]
    fn arbitrary_body_with_links_never_panics(
        body in proptest::collection::vec(
            prop_oneof![
                Just("](".to_owned()),
                Just("scripts/".to_owned()),
                Just("references/".to_owned()),
                Just("../".to_owned()),
                Just("%2e%2E%".to_owned()),
                Just("```".to_owned()),
                Just("[x]: ".to_owned()),
                Just("\n".to_owned()),
                any::<char>().prop_map(|c| c.to_string()),
                "[a-z./#?<>()]{1,6}",
            ],
            0..40,
        ),
    ) {
        let dir = std::env::temp_dir().join("skilldeck-props-skill");
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(dir.join("references/a.md"), "see [b](b.md) and scripts/x.py").unwrap();
        std::fs::write(dir.join("references/b.md"), "b").unwrap();
        let text = format!(
            "---\nname: skilldeck-props-skill\ndescription: Use when testing.\n---\n[a](references/a.md)\n{}",
            body.concat()
        );
        let c = check_text(&text, Some(&dir), &ValidationOptions::strict());
        for d in &c.diagnostics {
            prop_assert!(d.line.unwrap_or(1) <= line_count(&text));
        }
    }

    #[test]
    fn repair_keeps_the_line_count(yaml in yamlish()) {
        if let Some((fixed, repairs)) = spec::repair_unquoted_colons(&yaml, 2) {
            prop_assert_eq!(fixed.split('\n').count(), yaml.split('\n').count());
            prop_assert!(!repairs.is_empty());
        }
    }

    #[test]
    fn split_body_starts_at_body_line(
        fm in "[a-z: \\n-]{0,80}",
        body in "[a-z \\n-]{0,80}",
    ) {
        let text = format!("---\n{fm}\n---\n{body}");
        if let Ok(split) = spec::split_frontmatter(&text) {
            let skipped: usize = (split.body_line - 1) as usize;
            let expected: String = text.split_inclusive('\n').skip(skipped).collect();
            prop_assert_eq!(split.body, expected.as_str());
            prop_assert!(!split.yaml.lines().any(|l| l.trim_end() == "---"));
        }
    }
}
