//! `skilldeck`: the command-line face of the skilldeck engine.

mod activate;
mod context;
mod error;
mod exit;
mod format;
mod list;
mod new;
mod prompt;
mod read;
mod render;
mod search;
mod serve;
mod show;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Agent Skills engine: validate, scaffold and serve SKILL.md skills.
#[derive(Debug, Parser)]
#[command(name = "skilldeck", version, about, propagate_version = true)]
struct Cli {
    /// Config file (default: ./skilldeck.toml, then $XDG_CONFIG_HOME/skilldeck/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Search only this skill root (repeatable); replaces the default roots
    /// (project, user, bundled). Config `roots` and `[[skill]]` entries stay.
    #[arg(long = "root", global = true, value_name = "DIR")]
    roots: Vec<PathBuf>,

    /// Use the on-disk metadata index (also `[discovery] index = true`): a
    /// second run skips reading unchanged SKILL.md files.
    #[arg(long, global = true)]
    index: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate skills against the Agent Skills specification.
    Validate(validate::Args),
    /// Create a new skill folder with a valid SKILL.md.
    New(new::Args),
    /// List discovered skills.
    List(list::Args),
    /// Show one skill: metadata, instructions and files.
    Show(show::Args),
    /// Print the skill catalog for a system prompt, under a budget.
    Prompt(prompt::Args),
    /// Print a skill's instructions with arguments substituted, for a model.
    Activate(activate::Args),
    /// Read a file of a skill (paths that leave the skill are refused).
    Read(read::Args),
    /// Search skills by relevance (BM25 over names and descriptions).
    Search(search::Args),
    /// Serve the skills to MCP clients (stdio, or streamable HTTP with --http).
    Serve(serve::Args),
    /// Print shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if !e.is_broken_pipe() {
                eprintln!("error: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<u8, error::CliError> {
    let config = skilldeck::Config::discover(cli.config.as_deref())?
        .map(|(_, c)| c)
        .unwrap_or_default();
    let mut config = config;
    config.discovery.index |= cli.index;
    let ctx = context::Context::new(config, cli.roots)?;
    match cli.command {
        Command::Validate(args) => validate::run(&args, &ctx),
        Command::New(args) => new::run(&args, &ctx.config),
        Command::List(args) => list::run(&args, &ctx),
        Command::Show(args) => show::run(&args, &ctx),
        Command::Read(args) => read::run(&args, &ctx),
        Command::Activate(args) => activate::run(&args, &ctx),
        Command::Prompt(args) => prompt::run(&args, &ctx),
        Command::Search(args) => search::run(&args, &ctx),
        Command::Serve(args) => serve::run(&args, &ctx),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "skilldeck", &mut std::io::stdout());
            Ok(exit::OK)
        }
    }
}
