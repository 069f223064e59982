//! `skilldeck`: the command-line face of the skilldeck engine.

mod activate;
mod allocator;
mod audit;
mod call;
mod channels;
mod context;
mod doctor;
mod env;
mod error;
mod exit;
mod export;
mod format;
mod git_source;
mod install;
mod list;
mod marketplace_source;
mod new;
mod oci_source;
mod pack;
mod prompt;
mod publish;
mod publish_tree;
mod read;
mod registry;
mod registry_client;
mod render;
mod run;
mod sandbox;
mod search;
mod serve;
mod show;
mod signing;
mod validate;
mod verify;
mod wellknown_source;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::context::{Context, DeckArgs};

/// Agent Skills engine: validate, scaffold and serve SKILL.md skills.
#[derive(Debug, Parser)]
#[command(
    name = "skilldeck",
    version,
    about,
    propagate_version = true,
    after_help = "Start with `skilldeck doctor` to see where skills are looked for.\n\
                  Completions with skill names: `source <(COMPLETE=bash skilldeck)` (also zsh, fish, elvish, powershell)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate skills against the Agent Skills specification.
    #[command(
        after_help = "Examples:\n  skilldeck validate .agents/skills/pdf-tools\n  \
                            skilldeck validate -r .agents/skills --strict --format json"
    )]
    Validate {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: validate::Args,
    },
    /// Audit skills for risks: download-and-execute, obfuscated code,
    /// secrets sent out, reverse shells, prompt injection, what cannot be
    /// analysed (exit 1 at or above --fail-on).
    Audit(audit::Args),
    /// Create a new skill folder with a SKILL.md to fill in.
    #[command(
        after_help = "Examples:\n  skilldeck new pdf-tools                 # in ./.agents/skills\n  \
                            skilldeck new pdf-tools --dir ~/.agents/skills"
    )]
    New(new::Args),
    /// List discovered skills.
    #[command(
        after_help = "Examples:\n  skilldeck list\n  skilldeck list --shadowed --root ./skills --format json"
    )]
    List {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: list::Args,
    },
    /// Show one skill: metadata, instructions and files.
    #[command(
        after_help = "Examples:\n  skilldeck show pdf-tools\n  skilldeck show pdf-tools --format json"
    )]
    Show {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: show::Args,
    },
    /// Print the skill catalog for a system prompt, under a budget.
    #[command(
        after_help = "Examples:\n  skilldeck prompt --budget-tokens 2000 --explain\n  \
                            skilldeck prompt --query \"pdf tables\" --format markdown"
    )]
    Prompt {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: prompt::Args,
    },
    /// Print a skill's instructions with arguments substituted, for a model.
    #[command(
        after_help = "Examples:\n  skilldeck activate pdf-tools report.pdf\n  \
                            skilldeck activate pdf-tools --conversation c1 --format json"
    )]
    Activate {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: activate::Args,
    },
    /// Read a file of a skill (paths that leave the skill are refused).
    #[command(
        after_help = "Examples:\n  skilldeck read pdf-tools references/guide.md\n  \
                            skilldeck read pdf-tools scripts/extract.py --format json"
    )]
    Read {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: read::Args,
    },
    /// Search skills by relevance (BM25 over names and descriptions), or by
    /// a misspelled name.
    #[command(after_help = "Examples:\n  skilldeck search \"pdf tables\"\n  \
                            skilldeck search changlog --scope project --format json")]
    Search {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: search::Args,
    },
    /// Serve the skills to MCP clients (stdio, or streamable HTTP with --http).
    #[command(
        after_help = "Examples:\n  claude mcp add skilldeck -- skilldeck serve\n  \
                            skilldeck serve --http 127.0.0.1:8765 --root ~/team-skills"
    )]
    Serve {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: serve::Args,
    },
    /// Run a file of a skill in the sandbox (stdin passes through unless
    /// it is a terminal: a script never gets the terminal; the exit status
    /// is the script's, 124 on timeout).
    #[command(
        after_help = "Examples:\n  skilldeck run pdf-tools scripts/extract.py -- report.pdf\n  \
                            skilldeck run pdf-tools scripts/check.sh --timeout 5 --format json"
    )]
    Run {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: run::Args,
    },
    /// Call a tool a skill declares (`tools:`): the arguments are checked
    /// against its schema, then its script runs in the sandbox with them
    /// as JSON on stdin.
    #[command(
        after_help = "Examples:\n  skilldeck call notes search_notes --args '{\"query\": \"rust\"}'\n  \
                            skilldeck call notes stats --format json"
    )]
    Call {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: call::Args,
    },
    /// Show which isolation layers this machine offers and the policy
    /// `run` would apply.
    #[command(after_help = "Examples:\n  skilldeck sandbox\n  skilldeck sandbox --format json")]
    Sandbox {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: sandbox::Args,
    },
    /// Explain where skills come from: roots, config files, what was
    /// loaded, skipped, shadowed or excluded, and the catalog's size.
    #[command(
        after_help = "Examples:\n  skilldeck doctor\n  skilldeck doctor --root ./skills --format json"
    )]
    Doctor {
        #[command(flatten)]
        deck: DeckArgs,
        #[command(flatten)]
        args: doctor::Args,
    },
    /// Pack a skill folder into a deterministic .tar.gz or .zip; prints
    /// its fingerprint.
    #[command(
        after_help = "Examples:\n  skilldeck pack .agents/skills/pdf-tools\n  \
                            skilldeck pack pdf-tools -o dist/pdf-tools.zip\n  \
                            skilldeck pack pdf-tools -o dist/pdf-tools.tar.gz --sign ~/.ssh/id_ed25519"
    )]
    Pack(pack::Args),
    /// Run a skill registry: `serve` its HTTP API, `gc` its blobs.
    #[command(subcommand)]
    Registry(registry::RegistryCommand),
    /// Install packages or skill folders into a skills root, recorded in
    /// skilldeck.lock.
    #[command(
        after_help = "Examples:\n  skilldeck install dist/pdf-tools-1.2.0.tar.gz\n  \
                            skilldeck install pdf@1.2.0 --registry http://127.0.0.1:7878 --token-file read-token   # default/pdf\n  \
                            skilldeck install --frozen          # exactly what skilldeck.lock says\n  \
                            skilldeck install git+https://github.com/acme/skills#v1.2.0:pdf-tools\n  \
                            skilldeck install github:acme/skills/pdf-tools@v1.2.0   # the same\n  \
                            skilldeck install oci://ghcr.io/acme/pdf-tools:1.2.0   # recorded by its digest\n  \
                            skilldeck install marketplace:../acme-marketplace#document-skills:pdf\n  \
                            skilldeck install dist/pdf-tools-1.2.0.tar.gz --allowed-signers .agents/allowed_signers --require-signature"
    )]
    Install(install::Args),
    /// Write the skills of a root as a Claude Code or Codex plugin, with a
    /// marketplace entry and each skill's fingerprint.
    #[command(
        after_help = "Examples:\n  skilldeck export claude-plugin .agents/skills -o dist/acme-plugin --name acme\n  \
                            skilldeck export codex-plugin .agents/skills -o dist/acme-codex --name acme --plugin-version 1.2.0"
    )]
    Export(export::Args),
    /// Show skills whose source names other content than the lock's now
    /// (a git branch's commit, an OCI tag's digest, a well-known index's or
    /// a marketplace entry's skill), and pinned git tags with newer version
    /// tags (exit 1 when any).
    #[command(after_help = "Examples:\n  skilldeck outdated\n  skilldeck outdated --output json")]
    Outdated(git_source::OutdatedArgs),
    /// Update skills that follow their source (git branches, OCI tags,
    /// well-known indexes, marketplace entries) to what it names now, all
    /// or nothing; pinned commits, git tags and OCI digests stay. Shows old
    /// → new commit or digest and fingerprint.
    #[command(after_help = "Examples:\n  skilldeck update\n  skilldeck update pdf-tools --dry-run")]
    Update(git_source::UpdateArgs),
    /// Remove installed skills: folder and lock entry together.
    #[command(
        after_help = "Examples:\n  skilldeck remove pdf-tools\n  skilldeck remove pdf-tools --force   # even with local edits"
    )]
    Remove(git_source::RemoveArgs),
    /// Skill environments (dependencies built at install time): list the
    /// store, or collect what no lock records.
    #[command(
        subcommand,
        after_help = "Examples:\n  skilldeck env list\n  skilldeck env gc --dry-run\n  skilldeck env gc"
    )]
    Env(env::EnvCommand),
    /// Re-hash installed skills against skilldeck.lock and check the
    /// signatures beside their sources (exit 1 on any difference).
    #[command(
        after_help = "Examples:\n  skilldeck verify\n  skilldeck verify --dir ~/.agents/skills --format json\n  \
                            skilldeck verify --allowed-signers .agents/allowed_signers --require-signature"
    )]
    Verify(verify::Args),
    /// Push a skill folder to an OCI registry as an artifact (its package
    /// as the layer, its fingerprint as an annotation).
    #[command(
        after_help = "Examples:\n  skilldeck push oci://ghcr.io/acme/pdf-tools:1.2.0 .agents/skills/pdf-tools\n  \
                            skilldeck push oci://127.0.0.1:5000/pdf-tools:dev   # the current folder; http on loopback"
    )]
    Push(oci_source::PushArgs),
    /// Publish a skill folder or package to a registry.
    #[command(
        disable_version_flag = true,
        after_help = "Examples:\n  skilldeck publish .agents/skills/pdf-tools --namespace acme --registry http://127.0.0.1:7878 --token-file admin-token\n  \
                            skilldeck publish dist/pdf-tools-1.2.0.tar.gz --version 1.2.0 --registry https://skills.example\n  \
                            skilldeck publish -r ./skills --namespace acme --version 0.1.0 --registry http://127.0.0.1:7878 --token-file admin-token"
    )]
    Publish(publish::Args),
    /// Print static shell completions (for completions with skill names,
    /// use `COMPLETE=SHELL skilldeck`: see the README).
    #[command(
        after_help = "Examples:\n  skilldeck completions bash > ~/.local/share/bash-completion/completions/skilldeck\n  \
                            source <(COMPLETE=bash skilldeck)   # dynamic: completes skill names too"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

fn main() -> ExitCode {
    // `COMPLETE=bash skilldeck` prints the shell's registration script;
    // the shell then calls back here to complete a command line.
    clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command).complete();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if !e.is_broken_pipe() {
                eprintln!("error: {}", render::safe(&e.to_string()));
            }
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<u8, error::CliError> {
    match cli.command {
        Command::Validate { deck, args } => validate::run(&args, &Context::new(&deck)?),
        Command::Audit(args) => audit::run(&args),
        Command::New(args) => new::run(&args, &Context::new(&DeckArgs::default())?),
        Command::List { deck, args } => list::run(&args, &Context::new(&deck)?),
        Command::Show { deck, args } => show::run(&args, &Context::new(&deck)?),
        Command::Read { deck, args } => read::run(&args, &Context::new(&deck)?),
        Command::Activate { deck, args } => activate::run(&args, &Context::new(&deck)?),
        Command::Prompt { deck, args } => prompt::run(&args, &Context::new(&deck)?),
        Command::Search { deck, args } => search::run(&args, &Context::new(&deck)?),
        Command::Serve { deck, args } => serve::run(&args, &Context::new(&deck)?),
        Command::Run { deck, args } => run::run(&args, &Context::new(&deck)?),
        Command::Call { deck, args } => call::run(&args, &Context::new(&deck)?),
        Command::Sandbox { deck, args } => sandbox::run(&args, &Context::new(&deck)?),
        Command::Doctor { deck, args } => doctor::run(&args, &Context::new(&deck)?),
        Command::Pack(args) => pack::run(&args),
        Command::Registry(command) => registry::run(&command),
        Command::Install(args) => install::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Outdated(args) => git_source::outdated(&args),
        Command::Update(args) => git_source::update(&args),
        Command::Remove(args) => git_source::remove(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Env(command) => env::run(&command),
        Command::Push(args) => oci_source::push(&args),
        Command::Publish(args) => publish::run(&args),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "skilldeck", &mut std::io::stdout());
            Ok(exit::OK)
        }
    }
}
