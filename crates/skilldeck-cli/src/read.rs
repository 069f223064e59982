//! `skilldeck read NAME PATH`: one file of a skill, safely.

use std::io::Write;

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    name: String,
    /// A path relative to the skill folder (e.g. references/guide.md).
    path: String,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::READ), default_value = "raw")]
    format: Format,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    // Any skill in the deck, turned off or not (an inspection command);
    // the core's error says why a name is unknown.
    let skill = skilldeck::require(deck, &args.name)?;
    let resource = skilldeck::read_resource(skill, &args.path)?;
    let mut out = render::stdout();
    match args.format {
        Format::Json => render::write_json(&mut out, &resource.to_json())?,
        // The parser admits only json and raw.
        _ => out.write_all(resource.bytes())?,
    }
    out.flush()?;
    Ok(exit::OK)
}
