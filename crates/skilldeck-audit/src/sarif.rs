//! SARIF 2.1.0 (the OASIS Static Analysis Results Interchange Format) of
//! a set of audits, for code-scanning UIs: one run, the rules that fired
//! as `tool.driver.rules` (with `security-severity` for GitHub), one
//! result per finding with its location and level, allowed findings as
//! results with an external suppression carrying the reason.

use serde_json::{Value, json};

use crate::finding::{Severity, SkillAudit};
use crate::rules::RULES;

/// The SARIF version written.
pub const SARIF_VERSION: &str = "2.1.0";

/// The schema the document names.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The SARIF level of a severity: critical and high are `error`, medium
/// `warning`, low `note`.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// GitHub's `security-severity` (0.0 to 10.0; 9.0 and over is critical).
fn security_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "9.5",
        Severity::High => "8.0",
        Severity::Medium => "5.5",
        Severity::Low => "2.0",
    }
}

/// A relative URI for a path: `/`-separated, each segment
/// percent-encoded where URIs need it.
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The SARIF log of `audits`, made by `tool` at `version`.
pub fn to_sarif(audits: &[SkillAudit], tool: &str, version: &str) -> Value {
    let mut used: Vec<&str> = audits
        .iter()
        .flat_map(|a| a.findings.iter().map(|f| f.code.as_str()))
        .collect();
    used.sort_unstable();
    used.dedup();
    let rules: Vec<&crate::Rule> = RULES.iter().filter(|r| used.contains(&r.code)).collect();
    let rule_json: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.code,
                "name": r.code.replace(['.', '-'], "_"),
                "shortDescription": { "text": r.title },
                "fullDescription": { "text": r.title },
                "help": { "text": r.help },
                "defaultConfiguration": { "level": level(r.severity) },
                "properties": {
                    "tags": ["security", r.class.as_str()],
                    "security-severity": security_severity(r.severity),
                    "severity": r.severity.as_str(),
                }
            })
        })
        .collect();
    let mut results: Vec<Value> = Vec::new();
    for audit in audits {
        let base = audit.path.to_string_lossy();
        for f in &audit.findings {
            let Some(index) = rules.iter().position(|r| r.code == f.code) else {
                continue;
            };
            let mut region = serde_json::Map::new();
            if let Some(line) = f.line {
                region.insert("startLine".into(), json!(line));
                if let Some(col) = f.column {
                    region.insert("startColumn".into(), json!(col));
                }
                if !f.evidence.is_empty() {
                    region.insert("snippet".into(), json!({ "text": f.evidence }));
                }
            }
            let mut location = json!({
                "artifactLocation": { "uri": uri(&format!("{}/{}", base.trim_end_matches('/'), f.file)) }
            });
            if !region.is_empty() {
                location["region"] = Value::Object(region);
            }
            let mut result = json!({
                "ruleId": f.code,
                "ruleIndex": index,
                "level": level(f.severity),
                "message": { "text": f.message },
                "locations": [{ "physicalLocation": location }],
                "properties": {
                    "severity": f.severity.as_str(),
                    "class": f.class.as_str(),
                    "skill": audit.name,
                }
            });
            if let Some(reason) = &f.allowed {
                result["suppressions"] = json!([{ "kind": "external", "justification": reason }]);
            }
            results.push(result);
        }
    }
    json!({
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": { "driver": {
                "name": tool,
                "version": version,
                "informationUri": concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/audit.md"),
                "rules": rule_json,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}
