//! `skilldeck read NAME PATH`: one file of a skill, safely.

use std::io::Write;

use clap::ValueEnum;

use crate::EXIT_OK;
use crate::context::Context;
use crate::error::CliError;
use crate::render;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The file's bytes, as they are.
    Raw,
    /// `{path, size, mime, encoding, text | content_base64}`.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    name: String,
    /// A path relative to the skill folder (e.g. references/guide.md).
    path: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Raw)]
    format: Format,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.deck();
    let skill = skilldeck::search::require(deck, &args.name)?;
    let resource = skilldeck::read_resource(skill, &args.path)?;
    let mut out = render::stdout();
    match args.format {
        Format::Raw => out.write_all(resource.bytes())?,
        Format::Json => render::write_json(&mut out, &resource.to_json())?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}
