//! `skilldeck registry gc`: deletes blobs no version references, older
//! than the grace period; prints what it did as JSON.

use std::time::Duration;

use skilldeck_registry::Registry;

use crate::error::CliError;
use crate::registry::{Backend, registry_error, runtime};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    backend: Backend,
    /// Keep unreferenced blobs younger than this many seconds [default:
    /// the registry's GC_GRACE, one hour].
    #[arg(long, value_name = "SECS")]
    grace_secs: Option<u64>,
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    let data = args.backend.data_dir()?;
    let config = args.backend.config(&data);
    runtime()?.block_on(async move {
        let registry = Registry::open(config).await.map_err(registry_error)?;
        let grace = args
            .grace_secs
            .map(Duration::from_secs)
            .unwrap_or(registry.limits().gc_grace);
        let report = registry.gc(grace).await.map_err(registry_error)?;
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| CliError::Usage(e.to_string()))?;
        println!("{text}");
        Ok(crate::exit::OK)
    })
}
