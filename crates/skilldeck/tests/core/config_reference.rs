//! `docs/configuration.md`'s reference table cannot drift from the code:
//! every key the config file accepts is documented, every documented key is
//! accepted, and every default written as a literal is the code's.
//!
//! The keys are read from the config types themselves: each section refuses
//! unknown keys, and its refusal lists the keys it accepts ("unknown field
//! `zz-probe`, expected one of ..."), so a key added to a struct shows up
//! here without anyone listing it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use skilldeck::Error;

use crate::common::parse;

/// The table's heading in `docs/configuration.md`.
const HEADING: &str = "## Reference: every key";

/// A key no section has, used to make a section list the keys it accepts.
const PROBE: &str = "zz-probe";

/// The section name for top-level keys in the table.
const TOP: &str = "(top)";

/// One row: section, key, default cell.
struct Row {
    section: String,
    key: String,
    default: String,
}

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md")
}

fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(doc_path()).unwrap();
    let table = text
        .split_once(HEADING)
        .unwrap_or_else(|| panic!("docs/configuration.md has no '{HEADING}' section"))
        .1;
    let mut rows = Vec::new();
    for line in table.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if cells.len() < 4 || cells[0] == "section" || cells[0].starts_with("---") {
            continue;
        }
        rows.push(Row {
            section: cells[0].trim_matches('`').to_string(),
            key: cells[1].trim_matches('`').to_string(),
            default: cells[2].to_string(),
        });
    }
    assert!(
        rows.len() > 20,
        "the reference table was not found or is empty"
    );
    rows
}

/// The TOML header that opens `section` (`[exec.skills.<name>]` becomes
/// `[exec.skills.x]`); empty for the top level.
fn header(section: &str) -> String {
    if section == TOP {
        String::new()
    } else {
        format!("{}\n", section.replace("<name>", "x"))
    }
}

/// The keys `section` accepts, read from its refusal of an unknown key;
/// `None` when the section is not a table of fixed keys (a map, or an
/// array of tables probed as a table).
fn accepted_keys(section: &str) -> Option<BTreeSet<String>> {
    let text = format!("{}{PROBE} = 1\n", header(section));
    let message = match parse(&text) {
        Err(Error::Config { message, .. }) => message,
        Err(other) => panic!("{section}: unexpected error {other}"),
        Ok(_) => return None,
    };
    if !message.contains(&format!("unknown field `{PROBE}`")) {
        return None;
    }
    let expected = message.split_once("expected").map(|(_, e)| e)?;
    Some(
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let mut by_section: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in rows() {
        by_section.entry(row.section).or_default().insert(row.key);
    }
    by_section
}

/// The sections to check: the top level, each documented section, and each
/// table a documented key opens (so a new section in the code is found
/// through its key at the level above).
fn sections_to_check(documented: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut sections: BTreeSet<String> = documented.keys().cloned().collect();
    sections.insert(TOP.to_string());
    for (section, keys) in documented {
        for key in keys {
            let child = if section == TOP {
                format!("[{key}]")
            } else if let Some(inner) = section.strip_prefix('[').and_then(|s| s.strip_suffix(']'))
            {
                format!("[{inner}.{key}]")
            } else {
                continue;
            };
            if accepted_keys(&child).is_some() {
                sections.insert(child);
            }
        }
    }
    // `[exec] skills` is a map of grants: its entries are one table each.
    sections.insert("[exec.skills.<name>]".to_string());
    sections.insert("[[skill]]".to_string());
    sections
}

#[test]
fn every_config_key_the_code_accepts_is_in_the_reference_and_no_other() {
    let documented = documented();
    let mut problems = Vec::new();
    for section in sections_to_check(&documented) {
        let accepted = if section == "[[skill]]" {
            // An array of tables: probe one entry.
            let message = match parse(&format!("[[skill]]\n{PROBE} = 1\n")) {
                Err(Error::Config { message, .. }) => message,
                other => panic!("[[skill]] probe: {other:?}"),
            };
            let expected = message.split_once("expected").unwrap().1;
            expected
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        } else {
            accepted_keys(&section)
                .unwrap_or_else(|| panic!("{section} does not list its keys when probed"))
        };
        let in_doc = documented.get(&section).cloned().unwrap_or_default();
        for key in accepted.difference(&in_doc) {
            problems.push(format!(
                "{section} {key}: accepted by the code, not documented"
            ));
        }
        for key in in_doc.difference(&accepted) {
            problems.push(format!(
                "{section} {key}: documented, not accepted by the code"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/configuration.md's reference table disagrees with the config types:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_literal_default_in_the_reference_is_the_codes_default() {
    let mut checked = 0;
    for row in rows() {
        let cell = row.default.as_str();
        // A literal default is one code span and nothing else.
        let Some(literal) = cell.strip_prefix('`').and_then(|c| c.strip_suffix('`')) else {
            continue;
        };
        if literal.contains('`') || row.section == "[[skill]]" {
            continue;
        }
        let base = header(&row.section);
        let without = parse(&base).unwrap();
        let with = parse(&format!("{base}{} = {literal}\n", row.key)).unwrap_or_else(|e| {
            panic!(
                "{} {} = {literal}: the documented default does not parse: {e}",
                row.section, row.key
            )
        });
        assert_eq!(
            with, without,
            "{} {}: the documented default {literal} is not the code's default",
            row.section, row.key
        );
        checked += 1;
    }
    assert!(checked > 20, "only {checked} literal defaults were checked");
}
