//! [`CatalogOptions`] and the [`Budget`] a catalog must fit.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Serialize;

use crate::catalog::format::CatalogFormat;
use crate::catalog::text::thousands;
use crate::catalog::tokens::Encoding;
use crate::limits::CATALOG_DESCRIPTION_FLOOR_CHARS;

/// The most the whole rendered catalog may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Budget {
    /// Unicode characters.
    Chars(usize),
    /// Tokens of `encoding`.
    Tokens {
        /// Most tokens.
        limit: usize,
        /// The tokenizer.
        encoding: Encoding,
    },
}

impl Budget {
    /// The limit, in the budget's unit.
    pub fn limit(self) -> usize {
        match self {
            Budget::Chars(n) | Budget::Tokens { limit: n, .. } => n,
        }
    }

    /// The unit: `characters` or `tokens`.
    pub fn unit(self) -> &'static str {
        match self {
            Budget::Chars(_) => "characters",
            Budget::Tokens { .. } => "tokens",
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Budget::Chars(n) => write!(f, "{} characters", thousands(*n)),
            Budget::Tokens { limit, encoding } => {
                write!(f, "{} tokens ({encoding})", thousands(*limit))
            }
        }
    }
}

/// How to render a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogOptions {
    /// The format (default `xml`).
    pub format: CatalogFormat,
    /// The budget; `None` renders everything in full.
    pub budget: Option<Budget>,
    /// Descriptions are not shortened below this many characters (default
    /// [`CATALOG_DESCRIPTION_FLOOR_CHARS`], at least [`CATALOG_MIN_FLOOR_CHARS`](crate::limits::CATALOG_MIN_FLOOR_CHARS)).
    pub floor_chars: usize,
    /// Show each skill's `SKILL.md` path (default true). Off for a model
    /// that cannot read the host's files (a remote MCP client): the paths
    /// would be useless to it and tell it the host's folder layout. The
    /// `skills-ref` format always carries them (its format requires them).
    pub locations: bool,
    /// Operator-set priorities by skill name (higher ranks first; missing
    /// is 0): ranked after pinned skills and before relevance. From
    /// `[catalog.priority]` in the config.
    pub priorities: BTreeMap<String, i64>,
    /// Recent use by skill name (activations; higher ranks first, missing
    /// is 0): ranked after relevance and before scope. A host fills it from
    /// what its sessions activated.
    pub uses: HashMap<String, u64>,
    /// How the model finds skills the budget left out, for the closing
    /// line (`N more skills are not listed; <hint>.`), e.g. "find them with
    /// the `search_skills` tool". Without it the line only gives the count.
    pub unlisted_hint: Option<String>,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            format: CatalogFormat::Xml,
            budget: None,
            floor_chars: CATALOG_DESCRIPTION_FLOOR_CHARS,
            locations: true,
            priorities: BTreeMap::new(),
            uses: HashMap::new(),
            unlisted_hint: None,
        }
    }
}

pub(super) fn budget_text(budget: Budget, unit: &str) -> String {
    match budget {
        Budget::Chars(n) => format!("{} {unit}", thousands(n)),
        Budget::Tokens { limit, encoding } => format!("{} {unit} ({encoding})", thousands(limit)),
    }
}
