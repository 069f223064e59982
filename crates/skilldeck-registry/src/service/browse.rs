//! Browsing skills (the web UI's lists): a page with its total, filtered
//! by namespace, by search text (the same BM25 search as the API's `?q=`)
//! and by what a skill's `latest` version needs, sorted by name, by the
//! last publish or by relevance; and the totals, namespaces and declared
//! capabilities a list shows above it. Who may list what is the API's
//! rule ([`listing_namespace`]).

use std::collections::{BTreeSet, HashSet};

use crate::error::RegistryError;
use crate::service::cursor;
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::service::skills::{listing_namespace, regex_for_namespace};
use crate::storage::browse::{self, Order};
use crate::wire::SkillSummary;

pub use crate::storage::browse::Need;

/// Namespaces a [`SkillFacets`] lists at most (past it a list offers a
/// text field instead of a choice).
pub const MAX_FACET_NAMESPACES: u32 = 200;
/// Distinct capability sets read for [`SkillFacets::capabilities`] at most.
pub const MAX_FACET_CAPABILITY_SETS: u32 = 1000;

impl Need {
    /// `scripts`, `allowed-tools` or `requires:<capability>`; `None` for
    /// an empty text.
    pub fn parse(text: &str) -> Result<Option<Need>, RegistryError> {
        let text = text.trim();
        Ok(match text {
            "" => None,
            "scripts" => Some(Need::Scripts),
            "allowed-tools" => Some(Need::AllowedTools),
            _ => match text.strip_prefix("requires:") {
                Some(word)
                    if !word.is_empty()
                        && word.starts_with(|c: char| {
                            c.is_ascii_lowercase() || c.is_ascii_digit()
                        })
                        && word.bytes().all(|b| {
                            b.is_ascii_lowercase() || b.is_ascii_digit() || b".-_".contains(&b)
                        }) =>
                {
                    Some(Need::Capability(word.to_owned()))
                }
                _ => {
                    return Err(RegistryError::bad_request(
                        "registry-invalid-need",
                        format!(
                            "'{text}' is not a filter: use scripts, allowed-tools or \
                             requires:<capability>"
                        ),
                    ));
                }
            },
        })
    }

    /// The text [`Need::parse`] reads back.
    pub fn as_text(&self) -> String {
        match self {
            Need::Scripts => "scripts".to_owned(),
            Need::AllowedTools => "allowed-tools".to_owned(),
            Need::Capability(c) => format!("requires:{c}"),
        }
    }
}

/// How a browse is sorted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BrowseSort {
    /// By relevance with search text, else by name.
    #[default]
    Default,
    /// By namespace, then name.
    Name,
    /// The most recently published first.
    Recent,
}

/// One browse: filters, order and the page.
#[derive(Debug, Clone, Default)]
pub struct BrowseQuery {
    /// Search text (BM25 over name and description).
    pub q: Option<String>,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only skills whose `latest` version needs this.
    pub need: Option<Need>,
    /// The order.
    pub sort: BrowseSort,
    /// Skills skipped before the page.
    pub offset: u64,
    /// Page size (the registry's page limits apply).
    pub limit: Option<u32>,
}

/// A page of a browse.
#[derive(Debug, Clone)]
pub struct BrowsePage {
    /// The skills on this page.
    pub items: Vec<SkillSummary>,
    /// How many skills match in all.
    pub total: u64,
    /// Skills skipped before this page.
    pub offset: u64,
    /// The page size used.
    pub limit: u32,
}

/// What a list shows above its skills (over what the caller may list).
#[derive(Debug, Clone)]
pub struct SkillFacets {
    /// Skills in all.
    pub skills: u64,
    /// Namespaces in all.
    pub namespaces: u64,
    /// The first [`MAX_FACET_NAMESPACES`] namespaces with their skill
    /// counts, by name.
    pub by_namespace: Vec<(String, u64)>,
    /// The capabilities the `latest` versions declare, sorted.
    pub capabilities: Vec<String>,
}

impl Registry {
    /// One page of skills `p` may list, filtered and sorted.
    pub async fn browse_skills(
        &self,
        p: &Principal,
        query: &BrowseQuery,
    ) -> Result<BrowsePage, RegistryError> {
        let limits = &self.inner.limits;
        let limit = cursor::page_limit(
            query.limit,
            limits.default_page_limit,
            limits.max_page_limit,
        )?;
        let namespace = listing_namespace(p, query.namespace.as_deref())?.unwrap_or_default();
        let offset = query.offset;
        let q = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
        let Some(q) = q else {
            let order = match query.sort {
                BrowseSort::Recent => Order::Recent,
                BrowseSort::Default | BrowseSort::Name => Order::Name,
            };
            let (items, total) = browse::page(
                &self.inner.db,
                &namespace,
                query.need.as_ref(),
                order,
                i64::try_from(offset).unwrap_or(i64::MAX),
                i64::from(limit),
            )
            .await?;
            return Ok(BrowsePage {
                items,
                total,
                offset,
                limit,
            });
        };
        // Search text: every hit, ranked, then the filters, then the order.
        let state = self.search_state().await?;
        let mut search = skilldeck::SearchQuery::new(q).limit(state.summaries.len());
        if !namespace.is_empty() {
            search = search.name_pattern(regex_for_namespace(&namespace)?);
        }
        let allowed: Option<HashSet<String>> = match &query.need {
            Some(need) => Some(
                browse::keys(&self.inner.db, &namespace, Some(need))
                    .await?
                    .into_iter()
                    .collect(),
            ),
            None => None,
        };
        let mut hits: Vec<SkillSummary> = state
            .index
            .search(&search)
            .iter()
            .filter(|h| allowed.as_ref().is_none_or(|a| a.contains(&h.name)))
            .filter_map(|h| {
                state.summaries.get(&h.name).map(|s| {
                    let mut s = s.clone();
                    s.score = Some(h.score);
                    s
                })
            })
            .collect();
        match query.sort {
            BrowseSort::Default => {}
            BrowseSort::Name => hits.sort_by(|a, b| {
                (a.namespace.as_str(), a.name.as_str()).cmp(&(b.namespace.as_str(), &b.name))
            }),
            BrowseSort::Recent => hits.sort_by(|a, b| {
                b.updated_at.cmp(&a.updated_at).then_with(|| {
                    (a.namespace.as_str(), &a.name).cmp(&(b.namespace.as_str(), &b.name))
                })
            }),
        }
        let total = hits.len() as u64;
        let items = hits
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(limit as usize)
            .collect();
        Ok(BrowsePage {
            items,
            total,
            offset,
            limit,
        })
    }

    /// The `namespace/name` of every skill `p` may list in `namespace`
    /// (all it may list when `None`) whose `latest` version needs `need`.
    pub async fn skills_needing(
        &self,
        p: &Principal,
        namespace: Option<&str>,
        need: &Need,
    ) -> Result<HashSet<String>, RegistryError> {
        let namespace = listing_namespace(p, namespace)?.unwrap_or_default();
        Ok(browse::keys(&self.inner.db, &namespace, Some(need))
            .await?
            .into_iter()
            .collect())
    }

    /// Totals, namespaces and declared capabilities over what `p` may list.
    pub async fn skill_facets(&self, p: &Principal) -> Result<SkillFacets, RegistryError> {
        let namespace = listing_namespace(p, None)?.unwrap_or_default();
        let (skills, namespaces, by_namespace) =
            browse::totals(&self.inner.db, &namespace, i64::from(MAX_FACET_NAMESPACES)).await?;
        let capabilities: BTreeSet<String> = browse::capability_sets(
            &self.inner.db,
            &namespace,
            i64::from(MAX_FACET_CAPABILITY_SETS),
        )
        .await?
        .iter()
        .flat_map(|set| set.split_whitespace().map(str::to_owned))
        .collect();
        Ok(SkillFacets {
            skills,
            namespaces,
            by_namespace,
            capabilities: capabilities.into_iter().collect(),
        })
    }
}
