//! `skilldeck prompt`: the level-1 catalog for a system prompt.

use std::io::Write;

use skilldeck::{BudgetOverride, CatalogFormat, Encoding};
use skilldeck_host::CatalogRequest;

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// xml (the client guide's <available_skills>), skills-ref (identical to
    /// `skills-ref to-prompt`), markdown or json. Default: config, else xml.
    #[arg(long)]
    format: Option<CatalogFormat>,
    /// Fit the catalog in this many characters.
    #[arg(long, value_name = "N", conflicts_with = "budget_tokens")]
    budget_chars: Option<usize>,
    /// Fit the catalog in this many tokens (exact tiktoken count).
    #[arg(long, value_name = "N")]
    budget_tokens: Option<usize>,
    /// Tokenizer for --budget-tokens: o200k_base (default) or cl100k_base.
    #[arg(long)]
    encoding: Option<Encoding>,
    /// Rank skills by relevance to this text (BM25) before the budget cuts.
    #[arg(long, value_name = "TEXT")]
    query: Option<String>,
    /// Leave out each skill's SKILL.md path (for a host that loads skills
    /// by name, or a model that cannot read this machine's files).
    #[arg(long)]
    no_locations: bool,
    /// Explain on stderr what was kept, shortened and left out, and why.
    #[arg(long)]
    explain: bool,
}

/// The closing line's hint: how a user of this catalog finds the skills
/// the budget left out.
const UNLISTED_HINT: &str = "find them with `skilldeck search WORDS`";

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let request = CatalogRequest {
        format: args.format,
        budget: BudgetOverride {
            chars: args.budget_chars,
            tokens: args.budget_tokens,
            encoding: args.encoding,
        },
        query: args.query.clone(),
        locations: args.no_locations.then_some(false),
        unlisted_hint: Some(UNLISTED_HINT.to_owned()),
        explain: args.explain,
    };
    let catalog = ctx.host()?.catalog(&request)?;
    if let Some(explanation) = &catalog.explanation {
        eprint!("{explanation}");
    }
    let summary = catalog.summary;
    if summary.skills > 0 && summary.listed() == 0 {
        eprintln!(
            "warning: the budget ({}) is too small for any skill: the catalog lists none of {}; \
             raise --budget-chars or --budget-tokens",
            summary
                .budget
                .map_or_else(|| "none".to_owned(), |b| b.to_string()),
            summary.skills
        );
    } else if summary.unlisted > 0 && !args.explain {
        eprintln!(
            "note: {} of {} skills listed within the budget ({}); {} left out (see --explain)",
            summary.listed(),
            summary.skills,
            summary
                .budget
                .map_or_else(|| "none".to_owned(), |b| b.to_string()),
            summary.unlisted
        );
    }
    let mut out = render::stdout_for(catalog.format == CatalogFormat::Json);
    out.write_all(catalog.text.as_bytes())?;
    out.flush()?;
    Ok(exit::OK)
}
