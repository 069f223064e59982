//! `skilldeck registry ...`: the registry's client commands (agents,
//! assignments, tokens). The rules live in `skilldeck-registry`; this
//! module only maps flags onto it.

pub mod agent;
pub mod assign;
pub mod token;

use crate::error::CliError;

/// The registry subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RegistryCommand {
    /// Agents: create, show, list, update, delete.
    #[command(
        subcommand,
        after_help = "Examples:\n  skilldeck registry agent create bot-1 --capability web --registry http://127.0.0.1:7878 --token-file admin-token"
    )]
    Agent(agent::AgentCommand),
    /// Assign a skill to an agent (a pinned version or a label).
    #[command(
        after_help = "Examples:\n  skilldeck registry assign bot-1 acme/pdf --label production --grant-network --registry http://127.0.0.1:7878"
    )]
    Assign(assign::AssignArgs),
    /// Take a skill away from an agent.
    Unassign(assign::UnassignArgs),
    /// Tokens: create one scoped to an agent.
    #[command(subcommand)]
    Token(token::TokenCommand),
}

/// Runs a registry subcommand.
pub fn run(command: &RegistryCommand) -> Result<u8, CliError> {
    match command {
        RegistryCommand::Agent(c) => agent::run(c),
        RegistryCommand::Assign(args) => assign::run_assign(args),
        RegistryCommand::Unassign(args) => assign::run_unassign(args),
        RegistryCommand::Token(c) => token::run(c),
    }
}
