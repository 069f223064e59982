//! `skilldeck registry ...`: run a registry server (`serve`), collect its
//! unreferenced blobs (`gc`), load it in bulk (`import`), and the client
//! commands. The rules live in `skilldeck-registry`; this module only maps
//! flags onto it.
//!
//! The server commands need the `server` feature (on by default). A build
//! without it (the lean binary `scripts/dist.sh` ships) still parses them
//! and refuses them, saying which build has them (`NotBuilt`).

pub mod agent;
pub mod assign;
pub mod deprecate;
#[cfg(feature = "server")]
pub mod gc;
#[cfg(feature = "server")]
pub mod import;
pub mod label;
#[cfg(feature = "server")]
pub mod serve;
pub mod skills;
pub mod test_run;
#[cfg(feature = "server")]
pub mod test_runner;
pub mod token;
pub mod yank;

use crate::error::CliError;

#[cfg(feature = "server")]
mod backend;
#[cfg(feature = "server")]
pub use backend::{Backend, registry_error, runtime};

/// The registry subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RegistryCommand {
    /// Serve the registry API (SQLite + a local folder by default, or
    /// PostgreSQL + S3).
    #[command(after_help = "Examples:\n  skilldeck registry serve\n  \
                      skilldeck registry serve --database-url postgres://reg@127.0.0.1/reg --store s3://skills --listen 0.0.0.0:7878")]
    #[cfg(feature = "server")]
    Serve(serve::Args),
    /// Serve the registry API (not in this build: see the error).
    #[cfg(not(feature = "server"))]
    #[command(hide = true)]
    Serve(NotBuilt),
    /// Delete blobs no version references (older than a grace period).
    #[command(
        after_help = "Examples:\n  skilldeck registry gc\n  skilldeck registry gc --grace-secs 0"
    )]
    #[cfg(feature = "server")]
    Gc(gc::Args),
    /// Delete unreferenced blobs (not in this build: see the error).
    #[cfg(not(feature = "server"))]
    #[command(hide = true)]
    Gc(NotBuilt),
    /// Publish every skill folder under a root straight into the
    /// registry's store (in-process, N at a time, through the registry's
    /// own publish): the bulk path for a first load or a migration.
    #[command(
        disable_version_flag = true,
        after_help = "Examples:\n  skilldeck registry import ./skills --data /srv/registry --namespace acme --jobs 4\n  \
                      skilldeck registry import ./skills --database-url postgres://reg@127.0.0.1/reg --store s3://skills"
    )]
    #[cfg(feature = "server")]
    Import(import::Args),
    /// Publish a root into the registry's store (not in this build: see the
    /// error).
    #[cfg(not(feature = "server"))]
    #[command(hide = true)]
    Import(NotBuilt),
    /// Agents: create, show, list, update, delete (a registry client).
    #[command(
        subcommand,
        after_help = "Examples:\n  skilldeck registry agent create bot-1 --capability web --registry http://127.0.0.1:7878 --token-file admin-token"
    )]
    Agent(agent::AgentCommand),
    /// Assign a skill to an agent (a pinned version or a label). A
    /// version or label that does not exist is refused (nothing changes),
    /// unless --allow-pending for a label that will be set later.
    #[command(
        disable_version_flag = true,
        after_help = "Examples:\n  skilldeck registry assign bot-1 acme/pdf --label production --grant-network --registry http://127.0.0.1:7878\n  \
                      skilldeck registry assign bot-1 acme/pdf --version 1.2.0\n  \
                      skilldeck registry assign bot-1 acme/pdf --label canary --allow-pending   # pending until `label set`"
    )]
    Assign(assign::AssignArgs),
    /// Take a skill away from an agent.
    Unassign(assign::UnassignArgs),
    /// Tokens: create (scoped to an agent, or with scopes; optional
    /// expiry), list, revoke.
    #[command(
        subcommand,
        after_help = "Examples:\n  skilldeck registry token create --agent bot-1 --expires-in 90d\n  \
                      skilldeck registry token create --scope read:acme --name dev-install   # install from acme, nothing else\n  \
                      skilldeck registry token list\n  skilldeck registry token revoke TOKEN_ID"
    )]
    Token(token::TokenCommand),
    /// Labels: point one at a version (`set`), or `list` a skill's.
    #[command(subcommand)]
    Label(label::LabelCommand),
    /// List or search the registry's skills.
    #[command(
        after_help = "Examples:\n  skilldeck registry skills --registry http://127.0.0.1:7878 --token-file admin-token\n  \
                      skilldeck registry skills --namespace acme --limit 50\n  \
                      skilldeck registry skills --query 'pdf forms' --format json"
    )]
    Skills(skills::Args),
    /// Yank a version: agents stop getting it, `latest` moves back, an
    /// install of exactly it still works with its lock (admin).
    #[command(
        after_help = "Examples:\n  skilldeck registry yank acme/pdf@1.2.0 --reason 'leaks the API key'\n  \
                      skilldeck registry yank pdf@1.2.0   # default/pdf"
    )]
    Yank(yank::YankArgs),
    /// Undo a yank (admin).
    #[command(after_help = "Examples:\n  skilldeck registry unyank acme/pdf@1.2.0")]
    Unyank(yank::UnyankArgs),
    /// Mark a version deprecated (still served; shown with the message)
    /// (admin).
    #[command(
        after_help = "Examples:\n  skilldeck registry deprecate acme/pdf@1.0.0 --message 'use 2.x: 1.x cannot read PDF 2.0'"
    )]
    Deprecate(deprecate::DeprecateArgs),
    /// Clear a deprecation (admin).
    #[command(after_help = "Examples:\n  skilldeck registry undeprecate acme/pdf@1.0.0")]
    Undeprecate(deprecate::UndeprecateArgs),
    /// Run one tool or script of a published version in the registry
    /// host's sandbox (its strict test-run policy), or list what can run.
    #[command(
        after_help = "Examples:\n  skilldeck registry test-run acme/pdf@1.2.0 --list --registry http://127.0.0.1:7878 --token-file admin-token\n  \
                      skilldeck registry test-run acme/pdf@1.2.0 --tool extract --arguments '{\"page\": 1}'\n  \
                      skilldeck registry test-run acme/pdf --script scripts/check.py -- --verbose"
    )]
    TestRun(test_run::Args),
}

/// Runs a registry subcommand.
pub fn run(command: &RegistryCommand) -> Result<u8, CliError> {
    match command {
        #[cfg(feature = "server")]
        RegistryCommand::Serve(args) => serve::run(args),
        #[cfg(feature = "server")]
        RegistryCommand::Gc(args) => gc::run(args),
        #[cfg(feature = "server")]
        RegistryCommand::Import(args) => import::run(args),
        #[cfg(not(feature = "server"))]
        RegistryCommand::Serve(_) => Err(server_not_built("serve")),
        #[cfg(not(feature = "server"))]
        RegistryCommand::Gc(_) => Err(server_not_built("gc")),
        #[cfg(not(feature = "server"))]
        RegistryCommand::Import(_) => Err(server_not_built("import")),
        RegistryCommand::Agent(c) => agent::run(c),
        RegistryCommand::Assign(args) => assign::run_assign(args),
        RegistryCommand::Unassign(args) => assign::run_unassign(args),
        RegistryCommand::Token(c) => token::run(c),
        RegistryCommand::Label(c) => label::run(c),
        RegistryCommand::Skills(args) => skills::run(args),
        RegistryCommand::Yank(args) => yank::run_yank(args),
        RegistryCommand::Unyank(args) => yank::run_unyank(args),
        RegistryCommand::Deprecate(args) => deprecate::run_deprecate(args),
        RegistryCommand::Undeprecate(args) => deprecate::run_undeprecate(args),
        RegistryCommand::TestRun(args) => test_run::run(args),
    }
}

/// The arguments of a server command in a build without the server, taken
/// as they come so the refusal, not a parse error, is what the user reads.
#[cfg(not(feature = "server"))]
#[derive(Debug, clap::Args)]
pub struct NotBuilt {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _rest: Vec<String>,
}

/// The refusal of `registry COMMAND` in a build without the server.
#[cfg(not(feature = "server"))]
fn server_not_built(command: &str) -> CliError {
    CliError::Usage(format!(
        "`skilldeck registry {command}` is part of the registry server, which this build \
         leaves out (the lean binary). Install the full build: `cargo install --locked \
         --path crates/skilldeck-cli` (its default features include `server`), or build \
         this one with `--features server`"
    ))
}
