//! Findings accepted with a reason: per skill from `[audit.allow]` in
//! `skilldeck.toml` (the same config file and layering as `[validate]
//! allow`), or for every skill of one run (`--allow CODE=REASON`). An
//! allowed finding stays in the report with its reason and no longer
//! counts in the verdict.

use std::collections::BTreeMap;

use crate::error::Error;
use crate::finding::Finding;
use crate::rules::rule_of;

/// Codes allowed, with reasons.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    per_skill: BTreeMap<String, BTreeMap<String, String>>,
    every: BTreeMap<String, String>,
}

impl AllowList {
    /// The allow list of a config's `[audit]` section; an unknown code is
    /// an error naming the skill and the code.
    pub fn from_config(config: &skilldeck::deck::AuditConfig) -> Result<AllowList, Error> {
        let mut list = AllowList::default();
        for (skill, codes) in &config.allow {
            for (code, reason) in codes {
                list.allow(Some(skill), code, reason)?;
            }
        }
        Ok(list)
    }

    /// Allows `code` for `skill` (`None`: every skill) because of `reason`.
    pub fn allow(&mut self, skill: Option<&str>, code: &str, reason: &str) -> Result<(), Error> {
        if rule_of(code).is_none() {
            return Err(Error::UnknownCode {
                skill: skill.map(str::to_owned),
                code: code.to_owned(),
            });
        }
        if reason.trim().is_empty() {
            return Err(Error::NoReason {
                code: code.to_owned(),
            });
        }
        let target = match skill {
            Some(s) => self.per_skill.entry(s.to_owned()).or_default(),
            None => &mut self.every,
        };
        target.insert(code.to_owned(), reason.trim().to_owned());
        Ok(())
    }

    /// Parses `CODE=REASON` (the command line's form).
    pub fn parse_entry(text: &str) -> Result<(String, String), Error> {
        let (code, reason) = text.split_once('=').unwrap_or((text, ""));
        if rule_of(code.trim()).is_none() {
            return Err(Error::UnknownCode {
                skill: None,
                code: code.trim().to_owned(),
            });
        }
        if reason.trim().is_empty() {
            return Err(Error::NoReason {
                code: code.trim().to_owned(),
            });
        }
        Ok((code.trim().to_owned(), reason.trim().to_owned()))
    }

    /// True when nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.per_skill.is_empty() && self.every.is_empty()
    }

    /// The reason `code` is allowed for `skill`, if it is.
    pub fn reason(&self, skill: &str, code: &str) -> Option<&str> {
        self.per_skill
            .get(skill)
            .and_then(|codes| codes.get(code))
            .or_else(|| self.every.get(code))
            .map(String::as_str)
    }

    /// Marks the findings of `skill` this list allows.
    pub fn apply(&self, skill: &str, findings: &mut [Finding]) {
        if self.is_empty() {
            return;
        }
        for f in findings.iter_mut() {
            if let Some(reason) = self.reason(skill, &f.code) {
                f.allowed = Some(reason.to_owned());
            }
        }
    }
}
