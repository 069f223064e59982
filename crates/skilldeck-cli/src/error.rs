//! The CLI's error type: failures that end a command with
//! [`crate::exit::USAGE`].

use skilldeck::Diagnostic;

use crate::exit;

/// Everything that stops a command before it can give its verdict.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The core library refused (bad config file, unknown skill, I/O on a
    /// path).
    #[error(transparent)]
    Core(#[from] skilldeck::Error),
    /// The host layer failed (the conversation store).
    #[error(transparent)]
    Host(#[from] skilldeck_host::Error),
    /// A file or folder the command needs.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A skill's `SKILL.md` that cannot be read (its diagnostic, with file
    /// and line).
    #[error("{0}")]
    Skill(Box<Diagnostic>),
    /// A value the argument parser could not check (`--log-format`).
    #[error("{0}")]
    Usage(String),
    /// The MCP server could not start or stopped (a 401 from its
    /// registry says how to pass the token).
    #[error("{0}{help}", help = serve_token_help(.0))]
    Serve(#[from] skilldeck_mcp::Error),
    /// The sandbox refused to run a skill file (nothing ran).
    #[error(transparent)]
    Exec(#[from] skilldeck_exec::ExecError),
    /// A registry call failed (unreachable, refused, a bad answer); a
    /// 401 says how to pass a token ([`token_help`]).
    #[error("{0}{help}", help = token_help(.0))]
    RegistryClient(#[from] skilldeck_registry::client::ClientError),
    /// Writing the output failed (closed pipe, full disk).
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

/// What to do about a 401 from a registry (empty for any other error):
/// every command that talks to a registry takes `--token-file FILE`, else
/// the token in `SKILLDECK_TOKEN`.
pub fn token_help(e: &skilldeck_registry::client::ClientError) -> String {
    if e.status() != Some(401) {
        return String::new();
    }
    format!(
        "\nhelp: the registry needs a valid token: pass --token-file FILE (a file whose first \
         line is the token) or set {}; an admin makes one with `skilldeck registry token create \
         --scope read:NAMESPACE` (install), `--scope publish:NAMESPACE` (publish) or `--agent ID` \
         (serve --registry)",
        skilldeck_registry::client::TOKEN_ENV
    )
}

/// [`token_help`] for `serve --registry`, whose registry token comes from
/// `--token-file` (or `--registry-token-file` with `--http`).
fn serve_token_help(e: &skilldeck_mcp::Error) -> String {
    match e {
        skilldeck_mcp::Error::Source(skilldeck_source::Error::Client(c))
            if c.status() == Some(401) =>
        {
            format!(
                "{}; with --http, the registry's token is --registry-token-file FILE",
                token_help(c)
            )
        }
        _ => String::new(),
    }
}

impl CliError {
    /// A closed pipe (`skilldeck ... | head`) is not worth a message.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The exit code: [`exit::EXEC_REFUSED`] when the sandbox refused,
    /// else [`exit::USAGE`].
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Exec(_) => exit::EXEC_REFUSED,
            _ => exit::USAGE,
        }
    }
}
