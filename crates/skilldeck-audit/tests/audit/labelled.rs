//! The audit measured on the labelled set (tests/labelled/): precision and
//! recall per class must stay at or above the committed floors
//! (tests/labelled/floors.toml), and every benign look-alike must stay
//! below high.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use crate::common::measure::{labelled_dir, measure, table};
use skilldeck_audit::{Class, Severity};

#[derive(serde::Deserialize)]
struct Floors {
    class: BTreeMap<String, Floor>,
}

#[derive(serde::Deserialize)]
struct Floor {
    precision: f64,
    recall: f64,
}

#[test]
fn precision_and_recall_per_class_stay_at_or_above_the_committed_floors() {
    let measured = measure();
    let text = std::fs::read_to_string(labelled_dir().join("floors.toml")).unwrap();
    let floors: Floors = toml::from_str(&text).unwrap();
    let mut failures = Vec::new();
    for class in Class::ALL {
        let floor = floors
            .class
            .get(class.as_str())
            .unwrap_or_else(|| panic!("floors.toml has no [class.{class}]"));
        let c = measured.per_class[&class];
        if c.precision() + 1e-9 < floor.precision || c.recall() + 1e-9 < floor.recall {
            failures.push(format!(
                "{class}: precision {:.2} (floor {:.2}), recall {:.2} (floor {:.2})",
                c.precision(),
                floor.precision,
                c.recall(),
                floor.recall
            ));
        }
        assert!(
            c.positives >= 2,
            "{class}: the labelled set needs at least two malicious skills"
        );
    }
    assert!(
        failures.is_empty(),
        "below the floors:\n{}\n\n{}\nmistakes:\n{}",
        failures.join("\n"),
        table(&measured),
        measured.mistakes.join("\n")
    );
}

#[test]
fn no_benign_look_alike_is_rated_high_or_critical() {
    let measured = measure();
    let loud: Vec<String> = measured
        .audits
        .iter()
        .filter(|(audit, label)| label.classes.is_empty() && audit.verdict.at_least(Severity::High))
        .map(|(audit, _)| {
            let why: Vec<String> = audit
                .at_least(Severity::High)
                .map(|f| format!("{} {}", f.code, f.location()))
                .collect();
            format!("{}: {} ({})", audit.name, audit.verdict, why.join(", "))
        })
        .collect();
    assert!(loud.is_empty(), "{}", loud.join("\n"));
}

#[test]
fn every_malicious_skill_is_rated_high_or_worse_or_unanalysable() {
    let measured = measure();
    let quiet: Vec<String> = measured
        .audits
        .iter()
        .filter(|(_, label)| !label.classes.is_empty())
        .filter(|(audit, _)| audit.verdict < skilldeck_audit::Verdict::Medium)
        .map(|(audit, _)| format!("{}: {}", audit.name, audit.verdict))
        .collect();
    assert!(quiet.is_empty(), "{}", quiet.join("\n"));
}
