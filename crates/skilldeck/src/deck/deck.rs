//! The deck: every loaded skill, indexed by name, plus what discovery
//! skipped or shadowed. Loading returns an outcome, never an error: one bad
//! skill never hides the others.

use std::path::PathBuf;

use crate::catalog::hints::hints_of;
use crate::deck::eligibility::EligibilityContext;
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::skill::{Scope, Skill};

/// A skill that lost to a higher-precedence skill of the same name.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shadowed {
    /// The losing skill.
    pub skill: Skill,
    /// The winner's folder.
    pub winner_dir: PathBuf,
    /// The winner's scope.
    pub winner_scope: Scope,
}

/// One root as discovery saw it: the facts `skilldeck doctor` shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RootReport {
    /// The folder.
    pub path: PathBuf,
    /// Its scope.
    pub scope: Scope,
    /// It is a folder (a missing default root is skipped quietly).
    pub exists: bool,
    /// Skill folders found under it (before shadowing and load errors).
    pub found: usize,
    /// False for the bundled root in `fallback` mode when another root had
    /// a skill folder: its skills were left out.
    pub used: bool,
}

/// Discovered skills.
#[derive(Debug, Default)]
pub struct Deck {
    skills: Vec<Skill>,
    /// Positions in `skills`, sorted by name (names are unique in a deck).
    by_name: Vec<u32>,
    shadowed: Vec<Shadowed>,
    diagnostics: Vec<Diagnostic>,
    index_stats: Option<crate::deck::index::IndexStats>,
    roots: Vec<RootReport>,
}

impl Clone for Deck {
    fn clone(&self) -> Self {
        let mut skills = self.skills.clone();
        // Cloning a skill drops its catalog hints (a clone may be edited);
        // these clones stay inside a deck, so they keep them.
        for (copy, skill) in skills.iter_mut().zip(&self.skills) {
            copy.host.set_catalog_hints(skill.host.catalog_hints());
        }
        Deck {
            skills,
            by_name: self.by_name.clone(),
            shadowed: self.shadowed.clone(),
            diagnostics: self.diagnostics.clone(),
            index_stats: self.index_stats,
            roots: self.roots.clone(),
        }
    }
}

impl Deck {
    /// A deck of `skills` (sorted by scope, then name, for determinism).
    pub fn new(
        mut skills: Vec<Skill>,
        shadowed: Vec<Shadowed>,
        diagnostics: Vec<Diagnostic>,
    ) -> Self {
        // In place (an unstable sort allocates nothing; a stable one would
        // take a scratch array of up to 8 MB at 100,000 skills, at the peak
        // of a load). Deterministic: the skill file breaks ties of scope and
        // name (a deck from discovery has unique names anyway).
        skills.sort_unstable_by(|a, b| {
            (a.scope, &a.name, &a.skill_md).cmp(&(b.scope, &b.name, &b.skill_md))
        });
        let mut by_name: Vec<u32> = (0..skills.len())
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        by_name.sort_unstable_by(|&a, &b| {
            (&skills[a as usize].name, a).cmp(&(&skills[b as usize].name, b))
        });
        // The deck hands its skills out read-only from here on, so what
        // every catalog render would check can be checked once.
        for skill in &mut skills {
            let hints = hints_of(skill);
            skill.host.set_catalog_hints(hints);
        }
        // Eligibility, once per load: the process's context is built (and
        // PATH scanned) only when a skill has requirements.
        if skills.iter().any(|s| !s.requirements().is_empty()) {
            assess(&mut skills, &EligibilityContext::from_process());
        }
        Deck {
            skills,
            by_name,
            shadowed,
            diagnostics,
            index_stats: None,
            roots: Vec::new(),
        }
    }

    /// This deck with `extra` skills added (skills that do not come from a
    /// folder walk: an upstream MCP server's, whose names are namespaced so
    /// they cannot clash with a discovered one) and `diagnostics` (why
    /// others were refused). A name already in the deck keeps the
    /// discovered skill; the extra one is dropped.
    pub fn with_extra(self, extra: Vec<Skill>, diagnostics: Vec<Diagnostic>) -> Deck {
        if extra.is_empty() && diagnostics.is_empty() {
            return self;
        }
        let extra: Vec<Skill> = extra
            .into_iter()
            .filter(|skill| self.get(&skill.name).is_none())
            .collect();
        let Deck {
            mut skills,
            shadowed,
            diagnostics: mut all,
            index_stats,
            roots,
            ..
        } = self;
        skills.extend(extra);
        all.extend(diagnostics);
        let mut deck = Deck::new(skills, shadowed, all);
        deck.index_stats = index_stats;
        deck.roots = roots;
        deck
    }

    /// Decides every skill's eligibility again against `context` (a host
    /// that declares config keys, or runs skills elsewhere): the deck's
    /// served set follows.
    pub fn with_eligibility(mut self, context: &EligibilityContext) -> Self {
        assess(&mut self.skills, context);
        self
    }

    /// Records the roots discovery searched.
    pub fn with_roots(mut self, roots: Vec<RootReport>) -> Self {
        self.roots = roots;
        self
    }

    /// The roots discovery searched, in precedence order (empty for a deck
    /// not built by discovery).
    pub fn roots(&self) -> &[RootReport] {
        &self.roots
    }

    /// Records how discovery used the metadata index.
    pub fn with_index_stats(mut self, stats: Option<crate::deck::index::IndexStats>) -> Self {
        self.index_stats = stats;
        self
    }

    /// Hits and misses of the metadata index (`None`: no index was used).
    pub fn index_stats(&self) -> Option<crate::deck::index::IndexStats> {
        self.index_stats
    }

    /// Every skill, by scope then name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.by_name
            .binary_search_by(|&i| self.skills[i as usize].name.as_str().cmp(name))
            .ok()
            .map(|pos| &self.skills[self.by_name[pos] as usize])
    }

    /// Skills that lost to a same-named skill of higher precedence.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// Everything skipped, shadowed or worth a warning during discovery.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Bytes the deck holds on the heap for its skills (capacities; not
    /// allocator overhead, shadowed skills or diagnostics).
    pub fn heap_bytes(&self) -> usize {
        self.skills.capacity() * std::mem::size_of::<Skill>()
            + self.by_name.capacity() * std::mem::size_of::<u32>()
            + self.skills.iter().map(Skill::heap_bytes).sum::<usize>()
    }

    /// Bytes of raw catalog text: names, descriptions and paths.
    pub fn raw_bytes(&self) -> usize {
        self.skills.iter().map(Skill::raw_bytes).sum()
    }

    /// Number of skills.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// True when no skill was found.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// What a host tells its user when it loads the deck: every skill
    /// folder that was not loaded (errors) and every walk a folder limit cut
    /// short (`walk-limit`: skills beyond it are silently missing
    /// otherwise).
    pub fn load_problems(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error || d.code == Code::WalkLimit)
    }
}

fn assess(skills: &mut [Skill], context: &EligibilityContext) {
    for skill in skills {
        let verdict = context.check(skill.requirements()).err().map(|i| i.reason);
        skill.host.set_ineligible(verdict);
    }
}
