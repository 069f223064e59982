//! What a render did: the [`Catalog`], each skill's [`Outcome`] and
//! [`Reason`], and the `--explain` report.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

use crate::catalog::format::CatalogFormat;
use crate::catalog::options::Budget;
use crate::catalog::options::budget_text;
use crate::catalog::text::thousands;
use crate::skill::{Scope, Skill, SkillMode};

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
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Kept => self.kept += 1,
            Outcome::Shortened { .. } => self.shortened += 1,
            Outcome::NameOnly => self.name_only += 1,
            Outcome::Dropped => self.unlisted += 1,
            Outcome::Excluded => self.excluded += 1,
        }
        if outcome != Outcome::Excluded {
            self.skills += 1;
        }
    }

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
        match self.skills.get() {
            Some(skills) => {
                for skill in skills {
                    summary.add(skill.outcome);
                }
            }
            None => {
                let d = &self.decided;
                for &i in &d.ranked {
                    summary.add(d.outcome(i, d.offered[i]).0);
                }
                summary.excluded += d.excluded.len();
            }
        }
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
            decided: Decided::default(),
            skills: std::sync::OnceLock::from(
                self.skills()
                    .iter()
                    .map(|s| ExplainedSkill {
                        name: Cow::Owned(s.name.clone().into_owned()),
                        scope: s.scope,
                        mode: s.mode,
                        rank: s.rank,
                        relevance: s.relevance,
                        outcome: s.outcome,
                        reason: s.reason,
                    })
                    .collect::<Vec<_>>(),
            ),
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
///
/// The per-skill part ([`Explanation::skills`]) is made on first use, not
/// by every render: most renders (every catalog a host puts in a prompt)
/// never look at it, and building it was a tenth of a render's cost. The
/// counts ([`Explanation::summary`]) need no per-skill record.
#[derive(Clone)]
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
    /// What the render decided, kept as it was decided.
    pub(super) decided: Decided<'a>,
    /// [`Explanation::skills`], once asked for.
    pub(super) skills: std::sync::OnceLock<Vec<ExplainedSkill<'a>>>,
}

/// A render's decisions, per skill, in the arrays the render already had.
#[derive(Clone, Default)]
pub(super) struct Decided<'a> {
    /// The skills offered to the catalog, by input position.
    pub(super) offered: Vec<&'a Skill>,
    /// Positions in `offered`, in rank order.
    pub(super) ranked: Vec<usize>,
    /// How each offered skill was rendered (by input position).
    pub(super) views: Vec<super::entry::View>,
    /// Each offered skill's relevance score, when scores were given.
    pub(super) relevance: Option<Vec<f64>>,
    /// Shortened descriptions (input position, characters before and
    /// after), in input order; the others were kept whole.
    pub(super) shortened: Vec<(usize, Outcome)>,
    /// Skills never in the catalog, in input order, already explained.
    pub(super) excluded: Vec<ExplainedSkill<'a>>,
}

impl<'a> Explanation<'a> {
    /// Every skill given: in rank order, then the excluded ones in input
    /// order. Made on the first call.
    pub fn skills(&self) -> &[ExplainedSkill<'a>] {
        self.skills.get_or_init(|| self.decided.explain())
    }
}

impl<'a> Decided<'a> {
    fn explain(&self) -> Vec<ExplainedSkill<'a>> {
        let mut explained = Vec::with_capacity(self.ranked.len() + self.excluded.len());
        for (position, &i) in self.ranked.iter().enumerate() {
            let skill = self.offered[i];
            let (outcome, reason) = self.outcome(i, skill);
            explained.push(ExplainedSkill {
                name: Cow::Borrowed(skill.name.as_str()),
                scope: skill.scope,
                mode: skill.mode,
                rank: Some(position + 1),
                relevance: self.relevance.as_ref().map(|r| r[i]),
                outcome,
                reason,
            });
        }
        explained.extend(self.excluded.iter().cloned());
        explained
    }

    /// What happened to the offered skill at input position `i`, and why.
    fn outcome(&self, i: usize, skill: &Skill) -> (Outcome, Reason) {
        use super::entry::View;
        let pinned = skill.mode == SkillMode::Pinned;
        match self.views[i] {
            View::Full if pinned => (Outcome::Kept, Reason::Pinned),
            View::Full => (Outcome::Kept, Reason::Fits),
            View::Cut(_) => match self.shortened.binary_search_by_key(&i, |(at, _)| *at) {
                Ok(found) => (self.shortened[found].1, Reason::Budget),
                Err(_) => (Outcome::Kept, Reason::Fits),
            },
            View::NameOnly if skill.mode == SkillMode::NameOnly => {
                (Outcome::NameOnly, Reason::ModeNameOnly)
            }
            View::NameOnly => (Outcome::NameOnly, Reason::Budget),
            View::Dropped => (Outcome::Dropped, Reason::Budget),
        }
    }
}

impl PartialEq for Explanation<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.format == other.format
            && self.budget == other.budget
            && self.size == other.size
            && self.cap == other.cap
            && self.floor == other.floor
            && self.over_budget == other.over_budget
            && self.skills() == other.skills()
    }
}

impl fmt::Debug for Explanation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Explanation")
            .field("format", &self.format)
            .field("budget", &self.budget)
            .field("size", &self.size)
            .field("cap", &self.cap)
            .field("floor", &self.floor)
            .field("over_budget", &self.over_budget)
            .field("skills", &self.skills())
            .finish()
    }
}

/// Serialized with every skill (as before the per-skill part was lazy).
impl Serialize for Explanation<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Explanation", 7)?;
        s.serialize_field("format", &self.format)?;
        s.serialize_field("budget", &self.budget)?;
        s.serialize_field("size", &self.size)?;
        s.serialize_field("cap", &self.cap)?;
        s.serialize_field("floor", &self.floor)?;
        s.serialize_field("over_budget", &self.over_budget)?;
        s.serialize_field("skills", self.skills())?;
        s.end()
    }
}

impl Explanation<'_> {
    /// How many skills had `outcome` (shortened ones counted whatever their sizes).
    pub fn count(&self, outcome: Outcome) -> usize {
        self.skills()
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
            self.skills().len(),
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
            .skills()
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        for s in self.skills() {
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
