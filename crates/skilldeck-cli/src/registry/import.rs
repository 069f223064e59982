//! `skilldeck registry import ROOT --data DIR`: publishes every skill folder
//! under ROOT straight into a registry's store, in-process, N at a time.
//! The operator's bulk path (a first load, a migration, a test registry
//! with thousands of skills): each skill goes through the registry's own
//! publish (the same validation, risk audit, report, blobs and audit log
//! line as `POST /skills`) as the admin token of the data folder, without
//! HTTP and without the client-side checks `publish -r` repeats. A skill
//! already published with the same content is left as it is.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use skilldeck_package::{ArchiveFormat, PackOptions, UnpackOptions};
use skilldeck_registry::names::{Namespace, namespace_or_default};
use skilldeck_registry::{Principal, Registry, RegistryError};
use tokio::task::JoinSet;

use crate::error::CliError;
use crate::registry::{Backend, registry_error, runtime};
use crate::{exit, render};

/// Skills published at once by default.
pub const DEFAULT_IMPORT_JOBS: u64 = 4;
/// The most `--jobs` accepts.
pub const MAX_IMPORT_JOBS: u64 = 64;
/// How many times one skill is published while the registry answers
/// busy (its write slots or locks held by the other imports) before it
/// counts as refused.
const MAX_BUSY_ATTEMPTS: u32 = 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder holding the skill folders (searched recursively).
    root: PathBuf,
    #[command(flatten)]
    backend: Backend,
    /// The namespace to publish into [default: default].
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,
    /// The version of the skills that have no `metadata.version`.
    #[arg(long, value_name = "SEMVER")]
    version: Option<String>,
    /// Skills published at once (each is validated and audited on its
    /// own; the database takes the writes one after the other).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_IMPORT_JOBS,
          value_parser = clap::value_parser!(u64).range(1..=MAX_IMPORT_JOBS))]
    jobs: u64,
    /// The admin token file [default: DATA/admin-token, created when
    /// missing as `serve` does].
    #[arg(long, value_name = "FILE")]
    admin_token_file: Option<PathBuf>,
    /// Print only the summary line and what was refused, not one line per
    /// published skill.
    #[arg(short, long)]
    quiet: bool,
}

/// What happened to one skill folder.
enum Outcome {
    Published(String),
    Unchanged(String),
    Refused(String),
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    let started = Instant::now();
    let namespace = namespace_or_default(args.namespace.as_deref())
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let found = skilldeck::find_skill_dirs(&args.root, skilldeck::WalkLimits::default());
    for d in &found.diagnostics {
        eprintln!("{}", render::safe(&d.to_string()));
    }
    if found.skills.is_empty() {
        return Err(CliError::Usage(format!(
            "no SKILL.md found under {}: pass a folder holding skill folders",
            args.root.display()
        )));
    }
    let dirs: Vec<PathBuf> = found.skills.iter().map(|s| s.dir().to_path_buf()).collect();
    let data = args.backend.data_dir()?;
    std::fs::create_dir_all(&data).map_err(|e| CliError::Io {
        path: data.clone(),
        source: e,
    })?;
    let config = args.backend.config(&data);
    let token_file = args
        .admin_token_file
        .clone()
        .unwrap_or_else(|| data.join("admin-token"));
    let jobs = usize::try_from(args.jobs).unwrap_or(1);
    let outcomes = runtime()?.block_on(async move {
        let registry = Registry::open(config).await.map_err(registry_error)?;
        registry
            .ensure_admin_token(&token_file)
            .await
            .map_err(registry_error)?;
        let token = std::fs::read_to_string(&token_file).map_err(|e| CliError::Io {
            path: token_file.clone(),
            source: e,
        })?;
        let admin = Arc::new(
            registry
                .authenticate(token.trim(), None)
                .await
                .map_err(registry_error)?,
        );
        let version = args.version.clone();
        let mut set = JoinSet::new();
        let mut outcomes = Vec::with_capacity(dirs.len());
        let mut pending = dirs.into_iter();
        loop {
            while set.len() < jobs {
                let Some(dir) = pending.next() else { break };
                let (registry, admin, ns, version) = (
                    registry.clone(),
                    admin.clone(),
                    namespace.clone(),
                    version.clone(),
                );
                set.spawn(async move { import_one(&registry, &admin, &ns, version, dir).await });
            }
            let Some(done) = set.join_next().await else {
                break;
            };
            let outcome =
                done.map_err(|e| CliError::Usage(format!("registry import: a task failed: {e}")))?;
            match &outcome {
                // Always said, --quiet or not: what was refused and why.
                Outcome::Refused(why) => eprintln!("refused   {}", render::safe(why)),
                _ if args.quiet => {}
                Outcome::Published(s) => println!("published {}", render::safe(s)),
                Outcome::Unchanged(s) => println!("unchanged {}", render::safe(s)),
            }
            outcomes.push(outcome);
        }
        Ok::<_, CliError>(outcomes)
    })?;
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
    let published = count(|o| matches!(o, Outcome::Published(_)));
    let unchanged = count(|o| matches!(o, Outcome::Unchanged(_)));
    let refused = count(|o| matches!(o, Outcome::Refused(_)));
    eprintln!(
        "registry import {}: {published} published, {unchanged} unchanged, {refused} refused in {:.1} s",
        args.root.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(if refused > 0 { exit::INVALID } else { exit::OK })
}

/// Packs `dir` (off the runtime's threads) and publishes it.
async fn import_one(
    registry: &Registry,
    admin: &Principal,
    ns: &Namespace,
    version: Option<String>,
    dir: PathBuf,
) -> Outcome {
    let shown = dir.display().to_string();
    let packed = tokio::task::spawn_blocking(move || pack(&dir)).await;
    let packed = match packed {
        Ok(Ok(p)) => p,
        Ok(Err(why)) => return Outcome::Refused(format!("{shown}: {why}")),
        Err(e) => return Outcome::Refused(format!("{shown}: {e}")),
    };
    let version = packed.version.clone().or(version);
    let Some(version) = version else {
        return Outcome::Refused(format!(
            "{shown}: no version: give it `metadata.version` in SKILL.md, or pass --version"
        ));
    };
    let mut attempt = 1;
    loop {
        match registry
            .publish(
                admin,
                ns,
                Some(&version),
                packed.bytes.clone().into(),
                None,
                None,
            )
            .await
        {
            Ok(p) if p.created => {
                return Outcome::Published(format!("{ns}/{}@{}", p.name, p.version));
            }
            Ok(p) => return Outcome::Unchanged(format!("{ns}/{}@{}", p.name, p.version)),
            // The registry's bounds ran out (a write slot, a row lock, the
            // request's time: other imports hold them) and nothing was
            // kept: publish again when it says, a bounded number of times.
            Err(RegistryError::Busy { retry_after, .. }) if attempt < MAX_BUSY_ATTEMPTS => {
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(retry_after.max(1))).await;
            }
            Err(e) => {
                return Outcome::Refused(format!("{shown}: {e} (after {attempt} attempt(s))"));
            }
        }
    }
}

/// The folder packed as `publish` packs it (tar.gz, the registry's
/// validation), or why not.
fn pack(dir: &Path) -> Result<skilldeck_package::Packed, String> {
    let options = PackOptions {
        format: ArchiveFormat::TarGz,
        validation: UnpackOptions::default().validation,
        ..PackOptions::default()
    };
    skilldeck_package::pack(dir, &options).map_err(|e| match e {
        skilldeck_package::Error::Refused(diagnostics) => diagnostics
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    })
}
