//! What a render did: the [`Catalog`], each skill's [`Outcome`] and
//! [`Reason`], and the `--explain` report.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

use crate::catalog::format::CatalogFormat;
use crate::catalog::options::Budget;
use crate::catalog::options::budget_text;
use crate::catalog::text::thousands;
use crate::skill::{Scope, SkillMode};

/// A rendered catalog and what happened to each skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Catalog<'a> {
    /// The text for the system prompt.
    pub text: String,
    /// What was kept, shortened and dropped, and why.
    pub explanation: Explanation<'a>,
}

/// The counts of a rendered catalog, owned and small: what a host logs and
/// `skilldeck doctor` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CatalogSummary {
    /// Skills offered to the catalog that the model may invoke.
    pub skills: usize,
    /// Listed with their whole description.
    pub kept: usize,
    /// Listed with a shortened description.
    pub shortened: usize,
    /// Listed by name only (mode `name-only`).
    pub name_only: usize,
    /// Left out to fit the budget (the closing line counts them).
    pub unlisted: usize,
    /// Never in the catalog (mode `off` or `manual`, or
    /// `disable-model-invocation`).
    pub excluded: usize,
    /// The text's size, in the budget's unit.
    pub size: usize,
    /// The budget, if any.
    pub budget: Option<Budget>,
}

impl CatalogSummary {
    /// Skills in the text (whole, shortened or by name).
    pub fn listed(&self) -> usize {
        self.kept + self.shortened + self.name_only
    }
}

/// A catalog that owns everything it holds (no borrow of the skills), for
/// a binding or a cache that outlives the deck it was rendered from.
pub type OwnedCatalog = Catalog<'static>;

impl Catalog<'_> {
    /// The same catalog, owning the skill names its explanation borrowed.
    pub fn into_owned(self) -> OwnedCatalog {
        Catalog {
            text: self.text,
            explanation: self.explanation.into_owned(),
        }
    }
}

impl Explanation<'_> {
    /// The counts: listed, shortened, unlisted, excluded, size and budget.
    pub fn summary(&self) -> CatalogSummary {
        let mut summary = CatalogSummary {
            skills: 0,
            kept: 0,
            shortened: 0,
            name_only: 0,
            unlisted: 0,
            excluded: 0,
            size: self.size,
            budget: self.budget,
        };
        for skill in &self.skills {
            match skill.outcome {
                Outcome::Kept => summary.kept += 1,
                Outcome::Shortened { .. } => summary.shortened += 1,
                Outcome::NameOnly => summary.name_only += 1,
                Outcome::Dropped => summary.unlisted += 1,
                Outcome::Excluded => summary.excluded += 1,
            }
        }
        summary.skills = self.skills.len() - summary.excluded;
        summary
    }

    /// The same explanation, owning the skill names it borrowed.
    pub fn into_owned(self) -> Explanation<'static> {
        Explanation {
            format: self.format,
            budget: self.budget,
            size: self.size,
            cap: self.cap,
            floor: self.floor,
            over_budget: self.over_budget,
            skills: self
                .skills
                .into_iter()
                .map(|s| ExplainedSkill {
                    name: Cow::Owned(s.name.into_owned()),
                    scope: s.scope,
                    mode: s.mode,
                    rank: s.rank,
                    relevance: s.relevance,
                    outcome: s.outcome,
                    reason: s.reason,
                })
                .collect(),
        }
    }
}

/// What happened to one skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum Outcome {
    /// In the catalog with its whole description.
    Kept,
    /// In the catalog with a shortened description.
    Shortened {
        /// Characters before.
        from: usize,
        /// Characters after (the `…` included).
        to: usize,
    },
    /// In the catalog without its description.
    NameOnly,
    /// Left out to fit the budget.
    Dropped,
    /// Never in the catalog (see the reason).
    Excluded,
}

/// Why a skill got its [`Outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Mode `pinned`: never shortened or dropped.
    Pinned,
    /// There is no budget, or everything fits.
    Fits,
    /// Shortened, reduced to its name or dropped to fit the budget; lower
    /// ranks go first.
    Budget,
    /// Mode `name-only`.
    ModeNameOnly,
    /// Frontmatter `disable-model-invocation: true`.
    DisableModelInvocation,
    /// Mode `manual`.
    ModeManual,
    /// Mode `off`.
    ModeOff,
    /// Not eligible on this machine (its `requires`).
    Ineligible,
}

/// One skill in an [`Explanation`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedSkill<'a> {
    /// Its name (borrowed from the skill: no copy per skill; owned after
    /// [`Catalog::into_owned`]).
    pub name: Cow<'a, str>,
    /// Its scope.
    pub scope: Scope,
    /// Its mode.
    pub mode: SkillMode,
    /// 1-based rank (pinned first, then relevance, scope, name); `None` when excluded.
    pub rank: Option<usize>,
    /// Its relevance score, when scores were given.
    pub relevance: Option<f64>,
    /// What happened to it.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Why.
    pub reason: Reason,
}

/// What [`render`](crate::catalog::render()) did, for `--explain`. `Display` prints a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation<'a> {
    /// The format rendered.
    pub format: CatalogFormat,
    /// The budget, if any.
    pub budget: Option<Budget>,
    /// Size of the text, in the budget's unit (characters without a budget),
    /// counted on the whole text.
    pub size: usize,
    /// The common description cap, when descriptions had to be shortened.
    pub cap: Option<usize>,
    /// The floor used.
    pub floor: usize,
    /// True when the text exceeds the budget (only ever because of pinned skills).
    pub over_budget: bool,
    /// Every skill given: in rank order, then the excluded ones in input order.
    pub skills: Vec<ExplainedSkill<'a>>,
}

impl Explanation<'_> {
    /// How many skills had `outcome` (shortened ones counted whatever their sizes).
    pub fn count(&self, outcome: Outcome) -> usize {
        self.skills
            .iter()
            .filter(|s| std::mem::discriminant(&s.outcome) == std::mem::discriminant(&outcome))
            .count()
    }
}

impl fmt::Display for Explanation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = self.budget.map_or("characters", Budget::unit);
        write!(
            f,
            "catalog ({}): {} skills: {} kept, {} shortened, {} name-only, {} not listed, {} excluded; ",
            self.format,
            self.skills.len(),
            self.count(Outcome::Kept),
            self.count(Outcome::Shortened { from: 0, to: 0 }),
            self.count(Outcome::NameOnly),
            self.count(Outcome::Dropped),
            self.count(Outcome::Excluded),
        )?;
        match self.budget {
            Some(budget) => writeln!(
                f,
                "{} of {}",
                thousands(self.size),
                budget_text(budget, unit)
            )?,
            None => writeln!(f, "{} {unit}, no budget", thousands(self.size))?,
        }
        if self.over_budget {
            writeln!(
                f,
                "warning: over budget: pinned skills are never shortened or dropped, and they alone do not fit"
            )?;
        }
        if let Some(cap) = self.cap {
            writeln!(
                f,
                "descriptions shortened evenly to at most {cap} characters (floor {})",
                self.floor
            )?;
        }
        let unlisted = self.count(Outcome::Dropped);
        if unlisted > 0 {
            writeln!(
                f,
                "{unlisted} not listed: every listed skill keeps a description; the closing line \
                 tells the model how many are left out and how to find them"
            )?;
        }
        let width = self
            .skills
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        for s in &self.skills {
            let rank = s.rank.map_or_else(|| "-".to_owned(), |r| r.to_string());
            let what = match s.outcome {
                Outcome::Kept => "kept",
                Outcome::Shortened { .. } => "shortened",
                Outcome::NameOnly => "name-only",
                Outcome::Dropped => "unlisted",
                Outcome::Excluded => "excluded",
            };
            let why = match (s.outcome, s.reason) {
                (_, Reason::Pinned) => "pinned: never shortened or dropped".to_owned(),
                (_, Reason::Fits) if self.budget.is_none() => "no budget".to_owned(),
                (_, Reason::Fits) => "fits the budget".to_owned(),
                (Outcome::Shortened { from, to }, _) => {
                    format!("budget: description {from} -> {to} characters")
                }
                (Outcome::NameOnly, Reason::Budget) => {
                    "budget: the floor did not fit; lowest ranks lose descriptions first".to_owned()
                }
                (Outcome::Dropped, _) => "budget: the floor did not fit for every skill; \
                                           the lowest in keep order are not listed"
                    .to_owned(),
                (_, Reason::ModeNameOnly) => "mode name-only".to_owned(),
                (_, Reason::DisableModelInvocation) => "disable-model-invocation: true".to_owned(),
                (_, Reason::ModeManual) => "mode manual".to_owned(),
                (_, Reason::ModeOff) => "mode off".to_owned(),
                (_, Reason::Ineligible) => "not eligible on this machine (requires)".to_owned(),
                (_, Reason::Budget) => "budget".to_owned(),
            };
            let relevance = s
                .relevance
                .map(|r| format!(" (relevance {r:.3})"))
                .unwrap_or_default();
            writeln!(
                f,
                "  {rank:>5}  {what:<9}  {:<width$}  {why}{relevance}",
                s.name
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
