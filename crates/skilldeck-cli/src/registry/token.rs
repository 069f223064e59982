//! `skilldeck registry token create --agent ID`: a token scoped to one
//! agent (read its lock and catalog, download its skills), shown once.

use std::io::Write;

use skilldeck_registry::names::AgentId;

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed};
use crate::render;

/// `registry token ...`.
#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Create a token scoped to one agent; the token is printed once (on
    /// stdout, alone on its line in text format) and only its hash is
    /// stored.
    Create(CreateArgs),
}

/// `token create`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The agent the token reads as.
    #[arg(long, value_name = "ID")]
    agent: String,
    /// A name to recognise it by in audit lines.
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// Runs a token subcommand.
pub fn run(command: &TokenCommand) -> Result<u8, CliError> {
    match command {
        TokenCommand::Create(args) => {
            let agent = AgentId::new(&args.agent).map_err(|e| CliError::Usage(e.to_string()))?;
            let created = match args.client.client()?.agent_token(&agent, args.name.clone()) {
                Ok(c) => c,
                Err(e) => return failed(e),
            };
            let mut out = render::stdout_for(args.format == Format::Json);
            if args.format == Format::Json {
                render::write_json(&mut out, &created)?;
            } else {
                // The token alone on stdout (for `> file`); what it is on
                // stderr.
                writeln!(out, "{}", created.token)?;
                eprintln!(
                    "token {} ({}) scopes: {}",
                    render::safe(&created.id),
                    render::safe(&created.name),
                    render::safe(&created.scopes.join(" "))
                );
            }
            out.flush()?;
            Ok(exit::OK)
        }
    }
}
