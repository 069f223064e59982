//! Precision and recall of the audit per class on the labelled set
//! (`tests/labelled/`): shared by the `labelled` test (which holds them
//! to the floors in `tests/labelled/floors.toml`) and the `audit_table`
//! example (which prints the table for docs/benchmarks.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skilldeck_audit::{AuditOptions, Class, Severity, SkillAudit};

/// The labelled set's folder.
pub fn labelled_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/labelled")
}

/// A skill counts as flagged for a class when it has a finding of that
/// class at this severity or worse: `high` (what `--fail-on high`, the
/// default, blocks), `medium` for the two review-level classes.
pub fn threshold(class: Class) -> Severity {
    match class {
        Class::Unanalysable | Class::CapabilityMismatch => Severity::Medium,
        _ => Severity::High,
    }
}

/// One labelled skill.
#[derive(Debug, serde::Deserialize)]
pub struct Label {
    /// The attack classes it contains (empty: benign).
    pub classes: Vec<String>,
    /// The class a benign skill resembles.
    #[serde(default)]
    pub lookalike: Option<String>,
    /// Where the pattern comes from.
    pub source: String,
}

#[derive(Debug, serde::Deserialize)]
struct Labels {
    skill: BTreeMap<String, Label>,
}

/// One class's counts.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Labelled and flagged.
    pub tp: u32,
    /// Flagged, not labelled.
    pub fp: u32,
    /// Labelled, not flagged.
    pub fn_: u32,
    /// Skills labelled with the class.
    pub positives: u32,
    /// Benign look-alikes of the class.
    pub lookalikes: u32,
}

impl Counts {
    /// TP / (TP + FP); 1 when nothing was flagged.
    pub fn precision(&self) -> f64 {
        let flagged = self.tp + self.fp;
        if flagged == 0 {
            1.0
        } else {
            f64::from(self.tp) / f64::from(flagged)
        }
    }
    /// TP / (TP + FN); 1 when nothing is labelled.
    pub fn recall(&self) -> f64 {
        let labelled = self.tp + self.fn_;
        if labelled == 0 {
            1.0
        } else {
            f64::from(self.tp) / f64::from(labelled)
        }
    }
}

/// The result of auditing the labelled set.
pub struct Measured {
    /// Per class.
    pub per_class: BTreeMap<Class, Counts>,
    /// Each skill's audit with its label.
    pub audits: Vec<(SkillAudit, Label)>,
    /// Misses and false alarms, one line each.
    pub mistakes: Vec<String>,
}

/// Audits every labelled skill and counts per class.
pub fn measure() -> Measured {
    let dir = labelled_dir();
    let text = std::fs::read_to_string(dir.join("labels.toml"))
        .unwrap_or_else(|e| panic!("labels.toml: {e}"));
    let labels: Labels = toml::from_str(&text).unwrap_or_else(|e| panic!("labels.toml: {e}"));
    let mut per_class: BTreeMap<Class, Counts> =
        Class::ALL.iter().map(|c| (*c, Counts::default())).collect();
    let mut audits = Vec::new();
    let mut mistakes = Vec::new();
    let on_disk = std::fs::read_dir(dir.join("skills"))
        .unwrap_or_else(|e| panic!("skills: {e}"))
        .count();
    assert_eq!(
        on_disk,
        labels.skill.len(),
        "every fixture has a label and every label a fixture"
    );
    for (name, label) in labels.skill {
        let audit =
            skilldeck_audit::audit_skill(&dir.join("skills").join(&name), &AuditOptions::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        for class in Class::ALL {
            let labelled = label.classes.iter().any(|c| c == class.as_str());
            let flagged = audit.at_least(threshold(class)).any(|f| f.class == class);
            let counts = per_class.entry(class).or_default();
            if labelled {
                counts.positives += 1;
            }
            if label.lookalike.as_deref() == Some(class.as_str()) {
                counts.lookalikes += 1;
            }
            match (labelled, flagged) {
                (true, true) => counts.tp += 1,
                (false, true) => {
                    counts.fp += 1;
                    let why: Vec<String> = audit
                        .at_least(threshold(class))
                        .filter(|f| f.class == class)
                        .map(|f| format!("{} {} {}", f.severity, f.code, f.location()))
                        .collect();
                    mistakes.push(format!(
                        "false alarm: {name} flagged {class}: {}",
                        why.join("; ")
                    ));
                }
                (true, false) => {
                    counts.fn_ += 1;
                    mistakes.push(format!(
                        "missed: {name} is {class} ({}), verdict {}",
                        label.source, audit.verdict
                    ));
                }
                (false, false) => {}
            }
        }
        audits.push((audit, label));
    }
    Measured {
        per_class,
        audits,
        mistakes,
    }
}

/// The table as Markdown.
pub fn table(m: &Measured) -> String {
    let mut out = String::from(
        "| class | malicious | look-alikes | TP | FP | FN | precision | recall | flagged at |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for (class, c) in &m.per_class {
        out.push_str(&format!(
            "| {class} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {} |\n",
            c.positives,
            c.lookalikes,
            c.tp,
            c.fp,
            c.fn_,
            c.precision(),
            c.recall(),
            threshold(*class)
        ));
    }
    out
}
