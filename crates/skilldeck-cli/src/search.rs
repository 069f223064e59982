//! `skilldeck search QUERY`: BM25 over names and descriptions.

use std::io::Write;

use skilldeck::Scope;
use skilldeck::{SearchIndex, SearchQuery};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::list::truncate;
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What you are looking for.
    query: String,
    /// Most results.
    #[arg(long, default_value_t = skilldeck::limits::DEFAULT_SEARCH_LIMIT)]
    limit: usize,
    /// Only these scopes (repeatable).
    #[arg(long = "scope", value_name = "SCOPE")]
    scopes: Vec<Scope>,
    /// Only names matching this regular expression.
    #[arg(long = "name", value_name = "REGEX")]
    name_pattern: Option<regex::Regex>,
    /// Keywords every result must contain (repeatable).
    #[arg(long = "require", value_name = "WORD")]
    required: Vec<String>,
    /// Also search skill bodies (reads every SKILL.md).
    #[arg(long)]
    bodies: bool,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    let index = if args.bodies {
        SearchIndex::with_bodies(deck.skills())
    } else {
        SearchIndex::from_deck(deck)
    };
    let mut query = SearchQuery::new(args.query.as_str()).limit(args.limit);
    if !args.scopes.is_empty() {
        query = query.scopes(args.scopes.iter().copied());
    }
    if let Some(re) = &args.name_pattern {
        query = query.name_pattern(re.clone());
    }
    for word in &args.required {
        query = query.require(word.as_str());
    }
    let hits = index.search(&query);
    // Nothing relevant: perhaps a misspelled name.
    let suggestions = if hits.is_empty() {
        skilldeck::suggest(&args.query, deck.skills().iter().map(|s| s.name.as_str()))
    } else {
        Vec::new()
    };
    let mut out = render::stdout_for(args.format == Format::Json);
    match args.format {
        Format::Json => render::write_json(&mut out, &hits)?,
        // The parser admits only json and table.
        _ => {
            if hits.is_empty() {
                eprintln!("no skill matches '{}'", args.query);
                if !suggestions.is_empty() {
                    eprintln!("skills with a similar name:");
                }
                for name in &suggestions {
                    let description = deck.get(name).map_or("", |s| s.description.as_str());
                    writeln!(out, "{name}  {}", truncate(description, 64))?;
                }
            }
            let name_w = hits
                .iter()
                .map(|h| h.name.chars().count())
                .max()
                .unwrap_or(4)
                .max(4);
            for h in &hits {
                writeln!(
                    out,
                    "{:>6.2}  {:name_w$}  {:8}  {}",
                    h.score,
                    h.name,
                    h.scope.as_str(),
                    truncate(&h.description, 64)
                )?;
            }
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
