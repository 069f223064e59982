//! [`CatalogOptions`] and the [`Budget`] a catalog must fit.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Serialize;

use crate::catalog::format::CatalogFormat;
use crate::catalog::text::thousands;
use crate::catalog::tokens::Encoding;
use crate::error::Error;
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
    /// The encoding a budget in tokens given later (a request's
    /// [`BudgetOverride`]) is counted in: `[catalog] encoding`, default
    /// [`Encoding::default`].
    pub encoding: Encoding,
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
            encoding: Encoding::default(),
            floor_chars: CATALOG_DESCRIPTION_FLOOR_CHARS,
            locations: true,
            priorities: BTreeMap::new(),
            uses: HashMap::new(),
            unlisted_hint: None,
        }
    }
}

/// What a request may change in a catalog's budget (the CLI's
/// `--budget-chars`, `--budget-tokens`, `--encoding`; `serve`'s; Python's
/// `budget_chars=`, `budget_tokens=`, `encoding=`):
/// [`CatalogOptions::override_budget`] is the one rule every face applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BudgetOverride {
    /// A budget in characters.
    pub chars: Option<usize>,
    /// A budget in tokens.
    pub tokens: Option<usize>,
    /// The encoding tokens are counted in.
    pub encoding: Option<Encoding>,
}

impl CatalogOptions {
    /// Applies a request's `change`: a budget in characters or in tokens
    /// (both is an error) replaces the configured one; tokens are counted
    /// in the request's encoding, else the configured one
    /// ([`CatalogOptions::encoding`]); an encoding alone re-counts a
    /// configured budget in tokens.
    pub fn override_budget(&mut self, change: BudgetOverride) -> Result<(), Error> {
        if let Some(encoding) = change.encoding {
            self.encoding = encoding;
        }
        self.budget = match (change.chars, change.tokens) {
            (Some(_), Some(_)) => {
                return Err(Error::ConflictingOptions(
                    "give a budget in characters or in tokens, not both".to_owned(),
                ));
            }
            (Some(n), None) => Some(Budget::Chars(n)),
            (None, Some(limit)) => Some(Budget::Tokens {
                limit,
                encoding: self.encoding,
            }),
            (None, None) => match self.budget {
                Some(Budget::Tokens { limit, .. }) => Some(Budget::Tokens {
                    limit,
                    encoding: self.encoding,
                }),
                other => other,
            },
        };
        Ok(())
    }
}

pub(super) fn budget_text(budget: Budget, unit: &str) -> String {
    match budget {
        Budget::Chars(n) => format!("{} {unit}", thousands(n)),
        Budget::Tokens { limit, encoding } => format!("{} {unit} ({encoding})", thousands(limit)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_budget_override_counts_tokens_in_the_configured_encoding_unless_the_request_names_one() {
        let configured = CatalogOptions {
            encoding: Encoding::Cl100kBase,
            ..CatalogOptions::default()
        };
        let mut o = configured.clone();
        o.override_budget(BudgetOverride {
            tokens: Some(500),
            ..BudgetOverride::default()
        })
        .unwrap();
        assert_eq!(
            o.budget,
            Some(Budget::Tokens {
                limit: 500,
                encoding: Encoding::Cl100kBase
            })
        );
        // An encoding alone re-counts the budget in tokens.
        o.override_budget(BudgetOverride {
            encoding: Some(Encoding::O200kBase),
            ..BudgetOverride::default()
        })
        .unwrap();
        assert_eq!(
            o.budget,
            Some(Budget::Tokens {
                limit: 500,
                encoding: Encoding::O200kBase
            })
        );
        let mut c = configured.clone();
        c.override_budget(BudgetOverride {
            chars: Some(9),
            ..BudgetOverride::default()
        })
        .unwrap();
        assert_eq!(c.budget, Some(Budget::Chars(9)));
        assert!(matches!(
            configured.clone().override_budget(BudgetOverride {
                chars: Some(1),
                tokens: Some(1),
                encoding: None
            }),
            Err(Error::ConflictingOptions(_))
        ));
    }
}
