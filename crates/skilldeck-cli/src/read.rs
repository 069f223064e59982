//! `skilldeck read NAME PATH`: one file of a skill, safely.

use std::io::{IsTerminal, Write};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill's name.
    #[arg(add = crate::context::skill_names())]
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
    let resource = match skilldeck::read_resource(skill, &args.path) {
        Err(skilldeck::Error::Resource {
            problem: skilldeck::ResourceProblem::Folder,
            ..
        }) => return Err(folder_error(skill, &args.path)),
        other => other?,
    };
    // Raw bytes go out as they are, except to a terminal.
    let raw_to_terminal = args.format == Format::Raw && std::io::stdout().is_terminal();
    let mut out = render::stdout_for(!raw_to_terminal);
    match args.format {
        Format::Json => render::write_json(&mut out, &resource.to_json())?,
        // The parser admits only json and raw.
        _ => out.write_all(resource.bytes())?,
    }
    out.flush()?;
    Ok(exit::OK)
}

/// `read NAME FOLDER`: name the files the folder holds, from the core's
/// listing, so the next command can be typed.
fn folder_error(skill: &skilldeck::Skill, path: &str) -> CliError {
    let prefix = format!("{}/", path.trim_matches('/'));
    let files: Vec<String> = skilldeck::list_resources(skill)
        .map(|list| {
            list.files
                .into_iter()
                .filter(|f| prefix == "/" || f.path.starts_with(&prefix))
                .map(|f| f.path)
                .collect()
        })
        .unwrap_or_default();
    let listing = if files.is_empty() {
        "it holds no files".to_owned()
    } else {
        format!("its files: {}", files.join(", "))
    };
    CliError::Usage(format!(
        "skill '{}': '{path}' is a folder, not a file; {listing}",
        skill.name
    ))
}
