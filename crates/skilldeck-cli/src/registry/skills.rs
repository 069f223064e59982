//! `skilldeck registry skills`: list a registry's skills by name, or
//! search them (the registry ranks with the core's BM25), through its API.

use std::io::Write;

use skilldeck_registry::names::Namespace;

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed};
use crate::render;

/// `skills`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this namespace (a `read:NS` token lists its own namespace).
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,
    /// Search names and descriptions (ranked; best first).
    #[arg(long, short = 'q', value_name = "QUERY")]
    query: Option<String>,
    /// Most skills per page (the registry caps it).
    #[arg(long, value_name = "N")]
    limit: Option<u32>,
    /// The page after this cursor (printed as `more: --cursor ...`).
    #[arg(long, value_name = "CURSOR")]
    cursor: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// Runs `skills`.
pub fn run(args: &Args) -> Result<u8, CliError> {
    let namespace = args
        .namespace
        .as_deref()
        .map(Namespace::new)
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let page = match args.client.client()?.list_skills(
        args.query.as_deref(),
        namespace.as_ref(),
        args.cursor.as_deref(),
        args.limit,
    ) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let mut out = render::stdout_for(args.format == Format::Json);
    if args.format == Format::Json {
        render::write_json(&mut out, &page)?;
        out.flush()?;
        return Ok(exit::OK);
    }
    if page.items.is_empty() {
        writeln!(
            out,
            "no skills{}",
            if args.query.is_some() {
                " match (try fewer words, or drop --namespace)"
            } else {
                ""
            }
        )?;
    }
    for s in &page.items {
        writeln!(
            out,
            "{}/{} {} versions={}{} {}",
            s.namespace,
            s.name,
            s.latest.as_deref().unwrap_or("-"),
            s.versions,
            s.score
                .map(|score| format!(" score={score:.2}"))
                .unwrap_or_default(),
            s.description
        )?;
    }
    out.flush()?;
    if let Some(next) = page.next_cursor {
        eprintln!("more: --cursor {}", render::safe(&next));
    }
    Ok(exit::OK)
}
