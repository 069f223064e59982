//! The deck: every loaded skill, indexed by name, plus what discovery
//! skipped or shadowed. Loading returns an outcome, never an error: one bad
//! skill never hides the others.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::diagnostic::Diagnostic;
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

/// Discovered skills.
#[derive(Debug, Clone, Default)]
pub struct Deck {
    skills: Vec<Skill>,
    index: HashMap<String, usize>,
    shadowed: Vec<Shadowed>,
    diagnostics: Vec<Diagnostic>,
}

impl Deck {
    /// A deck of `skills` (sorted by scope, then name, for determinism).
    pub fn new(
        mut skills: Vec<Skill>,
        shadowed: Vec<Shadowed>,
        diagnostics: Vec<Diagnostic>,
    ) -> Self {
        skills.sort_by(|a, b| (a.scope, &a.name).cmp(&(b.scope, &b.name)));
        let index = skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        Deck {
            skills,
            index,
            shadowed,
            diagnostics,
        }
    }

    /// Every skill, by scope then name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.index.get(name).map(|&i| &self.skills[i])
    }

    /// Skills that lost to a same-named skill of higher precedence.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// Everything skipped, shadowed or worth a warning during discovery.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Number of skills.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// True when no skill was found.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }
}
