//! `skilldeck registry ...`: run a registry server (`serve`) and collect
//! its unreferenced blobs (`gc`). The rules live in `skilldeck-registry`;
//! this module only maps flags onto it.

pub mod agent;
pub mod assign;
pub mod deprecate;
pub mod gc;
pub mod import;
pub mod label;
pub mod serve;
pub mod skills;
pub mod test_run;
pub mod test_runner;
pub mod token;
pub mod yank;

use std::path::PathBuf;

use skilldeck_registry::{RegistryConfig, RegistryLimits};

use crate::error::CliError;

/// The registry subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RegistryCommand {
    /// Serve the registry API (SQLite + a local folder by default, or
    /// PostgreSQL + S3).
    #[command(after_help = "Examples:\n  skilldeck registry serve\n  \
                      skilldeck registry serve --database-url postgres://reg@127.0.0.1/reg --store s3://skills --listen 0.0.0.0:7878")]
    Serve(serve::Args),
    /// Delete blobs no version references (older than a grace period).
    #[command(
        after_help = "Examples:\n  skilldeck registry gc\n  skilldeck registry gc --grace-secs 0"
    )]
    Gc(gc::Args),
    /// Publish every skill folder under a root straight into the
    /// registry's store (in-process, N at a time, through the registry's
    /// own publish): the bulk path for a first load or a migration.
    #[command(
        disable_version_flag = true,
        after_help = "Examples:\n  skilldeck registry import ./skills --data /srv/registry --namespace acme --jobs 4\n  \
                      skilldeck registry import ./skills --database-url postgres://reg@127.0.0.1/reg --store s3://skills"
    )]
    Import(import::Args),
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
        RegistryCommand::Serve(args) => serve::run(args),
        RegistryCommand::Gc(args) => gc::run(args),
        RegistryCommand::Import(args) => import::run(args),
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

/// Where the registry keeps its state.
#[derive(Debug, Clone, clap::Args)]
pub struct Backend {
    /// The data folder (SQLite file, blobs, admin token, the staging
    /// folder of publishes in flight) [default:
    /// $XDG_DATA_HOME/skilldeck/registry].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// `sqlite://PATH?mode=rwc` or `postgres://...` [default: the SQLite
    /// file in the data folder].
    #[arg(
        long,
        value_name = "URL",
        env = "SKILLDECK_REGISTRY_DATABASE_URL",
        hide_env_values = true
    )]
    pub database_url: Option<String>,
    /// `file:///abs/dir` or `s3://bucket[/prefix]` (S3 settings from
    /// AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_REGION, AWS_ALLOW_HTTP) [default: DATA/blobs].
    #[arg(
        long,
        value_name = "URL",
        env = "SKILLDECK_REGISTRY_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
}

impl Backend {
    /// The data folder: `--data`, else `$XDG_DATA_HOME/skilldeck/registry`,
    /// else `~/.local/share/skilldeck/registry`.
    pub fn data_dir(&self) -> Result<PathBuf, CliError> {
        if let Some(d) = &self.data {
            return absolute(d);
        }
        if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|x| !x.is_empty()) {
            return Ok(PathBuf::from(x).join("skilldeck").join("registry"));
        }
        match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(h) => Ok(PathBuf::from(h).join(".local/share/skilldeck/registry")),
            None => Err(CliError::Usage(
                "no data folder: pass --data DIR (neither XDG_DATA_HOME nor HOME is set)".into(),
            )),
        }
    }

    /// The registry configuration these flags name.
    pub fn config(&self, data: &std::path::Path) -> RegistryConfig {
        RegistryConfig {
            database_url: self.database_url.clone().unwrap_or_else(|| {
                format!("sqlite://{}?mode=rwc", data.join("registry.db").display())
            }),
            store_url: self
                .store
                .clone()
                .unwrap_or_else(|| format!("file://{}", data.join("blobs").display())),
            staging_dir: data.join("staging"),
            limits: RegistryLimits::default(),
            trust: skilldeck_registry::TrustPolicy::default(),
            report: skilldeck_registry::ReportPolicy::default(),
        }
    }
}

fn absolute(path: &std::path::Path) -> Result<PathBuf, CliError> {
    std::path::absolute(path).map_err(|e| CliError::Io {
        path: path.to_path_buf(),
        source: e,
    })
}

/// A registry failure as a CLI error (its message names what failed).
pub fn registry_error(e: skilldeck_registry::RegistryError) -> CliError {
    CliError::Usage(format!("registry: {e}"))
}

/// A multi-threaded runtime for the server.
pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Output)
}
