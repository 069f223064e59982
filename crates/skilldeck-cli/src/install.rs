//! `skilldeck install SOURCE...`: packages or skill folders into a skills
//! root, atomically, recorded in `skilldeck.lock`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use skilldeck_package::{Action, InstallOptions, Source};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::pack::{refused, skills_root};
use crate::render;

/// Test hook (documented in docs/design.md): milliseconds to sleep after
/// each install step, so a test can kill the process between any two.
pub const PAUSE_ENV: &str = "SKILLDECK_TEST_INSTALL_PAUSE_MS";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Package files (.tar.gz, .zip) or skill folders. With --frozen and
    /// none given: every skill of the lock, from its recorded source.
    sources: Vec<PathBuf>,
    /// The skills root (default: .agents/skills of the current folder).
    #[arg(long, value_name = "ROOT")]
    dir: Option<PathBuf>,
    /// The lockfile (default: skilldeck.lock next to the root).
    #[arg(long, value_name = "FILE")]
    lock: Option<PathBuf>,
    /// Replace skills with local edits (or not installed by skilldeck).
    #[arg(long)]
    force: bool,
    /// Install exactly what the lock says; fail on any mismatch; never
    /// change the lock.
    #[arg(long)]
    frozen: bool,
    /// Output format.
    #[arg(long = "output", value_parser = Format::parser(format::TABLE), default_value = "text")]
    output: Format,
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    if args.sources.is_empty() && !args.frozen {
        return Err(CliError::Usage(
            "install needs at least one SOURCE (a package file or a skill folder), or --frozen"
                .into(),
        ));
    }
    let root = skills_root(args.dir.as_deref())?;
    let step_pause = std::env::var(PAUSE_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis);
    let options = InstallOptions {
        force: args.force,
        frozen: args.frozen,
        lockfile: args.lock.clone(),
        step_pause,
        ..InstallOptions::default()
    };
    let sources: Vec<Source> = args.sources.iter().map(|p| Source::from_path(p)).collect();
    let installed = match skilldeck_package::install(&root, &sources, &options) {
        Ok(i) => i,
        Err(e) => return refused(e),
    };
    let mut out = render::stdout_for(args.output == Format::Json);
    if args.output == Format::Json {
        render::write_json(&mut out, &installed)?;
    } else {
        for i in &installed {
            let verb = match i.action {
                Action::Added => "installed",
                Action::Replaced => "replaced",
                Action::Unchanged => "unchanged",
            };
            writeln!(
                out,
                "{verb} {}{} {} from {}",
                i.name,
                i.version
                    .as_deref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default(),
                i.fingerprint,
                i.source
            )?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
