//! `skilldeck registry yank|unyank NS/NAME@VERSION`: take a version out of
//! every agent's set (`latest` moves back to the highest other release)
//! or put it back, through the registry's API (admin; audited there).

use std::io::Write;

use skilldeck_registry::names::SkillRef;
use skilldeck_registry::wire::VersionDetail;

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed, parse_spec};
use crate::render;

/// The reason recorded when `--reason` is not given.
pub const NO_REASON: &str = "no reason given";

/// `yank`.
#[derive(Debug, clap::Args)]
pub struct YankArgs {
    /// The version: [NS/]NAME@VERSION (no NS/: the default namespace).
    #[arg(value_name = "[NS/]NAME@VERSION")]
    target: String,
    /// Why (shown with the version and recorded in the audit log).
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `unyank`.
#[derive(Debug, clap::Args)]
pub struct UnyankArgs {
    /// The version: [NS/]NAME@VERSION.
    #[arg(value_name = "[NS/]NAME@VERSION")]
    target: String,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `[NS/]NAME@VERSION`: a marker names one version, never "latest" by
/// default.
pub fn version_arg(text: &str) -> Result<(SkillRef, String), CliError> {
    if !text.contains('@') {
        return Err(CliError::Usage(format!(
            "'{text}': give the version, [NS/]NAME@VERSION (e.g. {text}@1.0.0; `skilldeck registry label list {text}` shows where the labels point)"
        )));
    }
    parse_spec(text)
}

/// Runs `yank`.
pub fn run_yank(args: &YankArgs) -> Result<u8, CliError> {
    let (skill, version) = version_arg(&args.target)?;
    let reason = args.reason.as_deref().unwrap_or(NO_REASON);
    match args.client.client()?.yank(&skill, &version, reason) {
        Ok(detail) => print(&detail, args.format, "yanked"),
        Err(e) => failed(e),
    }
}

/// Runs `unyank`.
pub fn run_unyank(args: &UnyankArgs) -> Result<u8, CliError> {
    let (skill, version) = version_arg(&args.target)?;
    match args.client.client()?.unyank(&skill, &version) {
        Ok(detail) => print(&detail, args.format, "unyanked"),
        Err(e) => failed(e),
    }
}

/// Prints a version after a marker changed: `VERB ns/name@v` and its
/// markers and labels.
pub fn print(detail: &VersionDetail, format: Format, verb: &str) -> Result<u8, CliError> {
    let mut out = render::stdout_for(format == Format::Json);
    if format == Format::Json {
        render::write_json(&mut out, detail)?;
    } else {
        let marker = |name: &str, m: &Option<skilldeck_registry::wire::Marker>| {
            m.as_ref()
                .map(|m| format!(" {name}: {}", m.reason))
                .unwrap_or_default()
        };
        writeln!(
            out,
            "{verb} {}/{}@{}{}{} labels=[{}]",
            detail.namespace,
            detail.name,
            detail.version,
            marker("yanked", &detail.yanked),
            marker("deprecated", &detail.deprecated),
            detail.labels.join(",")
        )?;
    }
    out.flush()?;
    Ok(exit::OK)
}
