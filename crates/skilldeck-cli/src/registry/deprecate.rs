//! `skilldeck registry deprecate|undeprecate NS/NAME@VERSION`: mark a
//! version as deprecated (still served, shown with the message) or clear
//! the mark, through the registry's API (admin; audited there).

use crate::error::CliError;
use crate::format::{self, Format};
use crate::registry::yank::{NO_REASON, print, version_arg};
use crate::registry_client::{ClientArgs, failed};

/// `deprecate`.
#[derive(Debug, clap::Args)]
pub struct DeprecateArgs {
    /// The version: [NS/]NAME@VERSION (no NS/: the default namespace).
    #[arg(value_name = "[NS/]NAME@VERSION")]
    target: String,
    /// What users should do instead (shown with the version).
    #[arg(long, value_name = "TEXT")]
    message: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `undeprecate`.
#[derive(Debug, clap::Args)]
pub struct UndeprecateArgs {
    /// The version: [NS/]NAME@VERSION.
    #[arg(value_name = "[NS/]NAME@VERSION")]
    target: String,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// Runs `deprecate`.
pub fn run_deprecate(args: &DeprecateArgs) -> Result<u8, CliError> {
    let (skill, version) = version_arg(&args.target)?;
    let message = args.message.as_deref().unwrap_or(NO_REASON);
    match args.client.client()?.deprecate(&skill, &version, message) {
        Ok(detail) => print(&detail, args.format, "deprecated"),
        Err(e) => failed(e),
    }
}

/// Runs `undeprecate`.
pub fn run_undeprecate(args: &UndeprecateArgs) -> Result<u8, CliError> {
    let (skill, version) = version_arg(&args.target)?;
    match args.client.client()?.undeprecate(&skill, &version) {
        Ok(detail) => print(&detail, args.format, "undeprecated"),
        Err(e) => failed(e),
    }
}
