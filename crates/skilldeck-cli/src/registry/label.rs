//! `skilldeck registry label set|list`: a skill's labels (named pointers
//! to versions agents follow, e.g. `production`), through the registry's
//! API. The rules (admin only, released versions only, `latest` managed,
//! protected labels) live in the registry.

use std::io::Write;

use skilldeck_registry::names::{Label, SkillRef};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed};
use crate::render;

/// `registry label ...`.
#[derive(Debug, clap::Subcommand)]
pub enum LabelCommand {
    /// Point a label at a version (admin): agents that follow the label
    /// get that version, and assignments pending on it become active.
    #[command(
        after_help = "Examples:\n  skilldeck registry label set acme/pdf production 1.2.0 --registry http://127.0.0.1:7878 --token-file admin-token\n  \
                      skilldeck registry label set pdf stable 2.0.0 --override-reason 'reviewed by security'   # default/pdf"
    )]
    Set(SetArgs),
    /// List a skill's labels and the version each points to.
    #[command(after_help = "Examples:\n  skilldeck registry label list acme/pdf\n  \
                      skilldeck registry label list acme/pdf --format json")]
    List(ListArgs),
}

/// `label set`.
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The skill, [NS/]NAME (no NS/: the default namespace).
    skill: String,
    /// The label (lowercase letters, digits, `-`; `latest` is moved by
    /// publish and yank, not by hand).
    label: String,
    /// The version it points to (released: not yanked, blocked or
    /// waiting for review).
    #[arg(value_name = "VERSION")]
    to: String,
    /// Why a protected label may point to a version the risk audit rated
    /// at or above the registry's threshold (recorded in the audit log).
    #[arg(long, value_name = "TEXT")]
    override_reason: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `label list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The skill, [NS/]NAME.
    skill: String,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `[NS/]NAME` as a skill, or a usage error.
pub fn skill_arg(text: &str) -> Result<SkillRef, CliError> {
    SkillRef::parse_or_default(text).map_err(|e| CliError::Usage(format!("'{text}': {e}")))
}

/// Runs a label subcommand.
pub fn run(command: &LabelCommand) -> Result<u8, CliError> {
    match command {
        LabelCommand::Set(args) => {
            let skill = skill_arg(&args.skill)?;
            let label = Label::new(&args.label).map_err(|e| CliError::Usage(e.to_string()))?;
            let moved = match args.client.client()?.move_label_overriding(
                &skill,
                &label,
                &args.to,
                args.override_reason.as_deref(),
            ) {
                Ok(m) => m,
                Err(e) => return failed(e),
            };
            let mut out = render::stdout_for(args.format == Format::Json);
            if args.format == Format::Json {
                render::write_json(&mut out, &moved)?;
            } else {
                writeln!(
                    out,
                    "{skill}: label {} -> {}{}",
                    moved.label,
                    moved.version,
                    moved
                        .previous
                        .as_deref()
                        .map(|p| format!(" (was {p})"))
                        .unwrap_or_else(|| " (new)".to_owned())
                )?;
            }
            out.flush()?;
            Ok(exit::OK)
        }
        LabelCommand::List(args) => {
            let skill = skill_arg(&args.skill)?;
            let detail = match args.client.client()?.skill(&skill) {
                Ok(d) => d,
                Err(e) => return failed(e),
            };
            let mut out = render::stdout_for(args.format == Format::Json);
            if args.format == Format::Json {
                render::write_json(
                    &mut out,
                    &serde_json::json!({"skill": skill, "labels": detail.labels}),
                )?;
            } else if detail.labels.is_empty() {
                writeln!(
                    out,
                    "{skill} has no labels (publish a release to get latest; set one with `skilldeck registry label set {skill} LABEL VERSION`)"
                )?;
            } else {
                for (label, version) in &detail.labels {
                    writeln!(out, "{label} {version}")?;
                }
            }
            out.flush()?;
            Ok(exit::OK)
        }
    }
}
