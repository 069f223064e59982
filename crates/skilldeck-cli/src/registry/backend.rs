//! Where a registry server keeps its state (`--data`, `--database-url`,
//! `--store`), shared by the server commands (`serve`, `gc`, `import`):
//! built only with the `server` feature.

use std::path::PathBuf;

use skilldeck_registry::{RegistryConfig, RegistryLimits};

use crate::error::CliError;

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
