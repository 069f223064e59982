//! [`CatalogRequest`]: a catalog composed for a caller (a system prompt, a
//! Python agent, `skilldeck prompt`), the one place where a request's
//! format, budget, query and locations meet the configured `[catalog]`.
//!
//! The rule for a budget given with the request (characters or tokens, not
//! both; tokens in the request's encoding, else the configured one) is the
//! core's [`CatalogOptions::override_budget`]; this module only decides
//! what the request starts from (the config's `[catalog]`, kept in
//! [`HostOptions::prompt_catalog`](crate::HostOptions::prompt_catalog)),
//! which skills it lists (the served ones, as every other path) and how a
//! query ranks them (the snapshot's BM25 index).

use skilldeck::{BudgetOverride, CatalogFormat, CatalogOptions, CatalogSummary};

use crate::host::Host;
use crate::snapshot::Snapshot;

/// What a caller asks of a catalog. `Default` is the configured catalog as
/// it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogRequest {
    /// The format; `None`: the configured one.
    pub format: Option<CatalogFormat>,
    /// A budget replacing the configured one (see
    /// [`CatalogOptions::override_budget`]).
    pub budget: BudgetOverride,
    /// Rank skills by relevance to this text (BM25) before the budget cuts.
    pub query: Option<String>,
    /// `Some(false)` leaves out each skill's `SKILL.md` path; `None`: the
    /// configured choice.
    pub locations: Option<bool>,
    /// The closing line's hint when the budget leaves skills out (how this
    /// caller's user finds them); `None`: the core's.
    pub unlisted_hint: Option<String>,
    /// Also return the report of what was kept, shortened and left out.
    pub explain: bool,
}

/// A composed catalog, owned (it outlives the snapshot it was rendered
/// from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposedCatalog {
    /// The text for the system prompt.
    pub text: String,
    /// What it lists and leaves out, against its budget.
    pub summary: CatalogSummary,
    /// The report of every skill's fate, when the request asked for it
    /// ([`CatalogRequest::explain`]).
    pub explanation: Option<String>,
    /// The format it is in.
    pub format: CatalogFormat,
}

impl CatalogRequest {
    /// The catalog options this request makes of `base` (the configured
    /// `[catalog]`).
    pub fn options(&self, base: &CatalogOptions) -> Result<CatalogOptions, skilldeck::Error> {
        let mut options = base.clone();
        if let Some(format) = self.format {
            options.format = format;
        }
        options.override_budget(self.budget)?;
        if let Some(locations) = self.locations {
            options.locations = locations;
        }
        if let Some(hint) = &self.unlisted_hint {
            options.unlisted_hint = Some(hint.clone());
        }
        Ok(options)
    }
}

impl Snapshot {
    /// The catalog `request` asks for, over this snapshot's served skills.
    pub fn compose_catalog(
        &self,
        request: &CatalogRequest,
    ) -> Result<ComposedCatalog, skilldeck::Error> {
        let options = request.options(&self.options().prompt_catalog)?;
        let relevance = request
            .query
            .as_deref()
            .map(|q| self.search_index().scores(q));
        let catalog = skilldeck::render_catalog(self.served(), &options, relevance.as_ref())?;
        Ok(ComposedCatalog {
            summary: catalog.explanation.summary(),
            explanation: request.explain.then(|| catalog.explanation.to_string()),
            text: catalog.text,
            format: options.format,
        })
    }
}

impl Host {
    /// The catalog `request` asks for, over the current snapshot (see
    /// [`Snapshot::compose_catalog`]).
    pub fn catalog(&self, request: &CatalogRequest) -> Result<ComposedCatalog, skilldeck::Error> {
        self.snapshot().compose_catalog(request)
    }
}
