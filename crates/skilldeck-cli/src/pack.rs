//! `skilldeck pack DIR`: a skill folder into a deterministic package; the
//! fingerprint on standard output. Also the CLI's rendering of package
//! refusals (shared by `install` and `verify`).

use std::path::{Path, PathBuf};

use skilldeck::ValidationOptions;
use skilldeck_package::{ArchiveFormat, Error, PackOptions};

use crate::error::CliError;
use crate::exit;
use crate::render;
use crate::signing;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The skill folder.
    dir: PathBuf,
    /// The package file to write (default: NAME[-VERSION].tar.gz in the
    /// current folder).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Archive format (default: from the output's extension, else tar.gz).
    #[arg(long, value_parser = ["tar.gz", "tgz", "zip"])]
    format: Option<String>,
    /// Validate in lenient mode (spec violations are warnings).
    #[arg(long)]
    lenient: bool,
    /// Sign the package with this OpenSSH private key (ed25519 or ECDSA;
    /// an encrypted key's passphrase in SKILLDECK_SIGNING_KEY_PASSPHRASE):
    /// writes OUTPUT.sig, as `ssh-keygen -Y sign -n skilldeck` would over
    /// the printed fingerprint.
    #[arg(long, value_name = "KEY")]
    sign: Option<PathBuf>,
    #[command(flatten)]
    audit: crate::audit::Gate,
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    if let Some(code) = args.audit.check(&[args.dir.as_path()], "pack")? {
        return Ok(code);
    }
    let format = match (&args.format, &args.output) {
        (Some(f), _) => ArchiveFormat::parse(f).unwrap_or(ArchiveFormat::TarGz),
        (None, Some(out)) if out.to_string_lossy().ends_with(".zip") => ArchiveFormat::Zip,
        _ => ArchiveFormat::TarGz,
    };
    let options = PackOptions {
        format,
        validation: if args.lenient {
            ValidationOptions::lenient()
        } else {
            ValidationOptions::strict()
        },
        ..PackOptions::default()
    };
    let key = match args.sign.as_deref().map(signing::load_key).transpose() {
        Ok(k) => k,
        Err(e) => return refused(e),
    };
    let packed = match skilldeck_package::pack(&args.dir, &options) {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    for w in &packed.warnings {
        eprintln!("{}", render::safe(&w.to_string()));
    }
    let output = args.output.clone().unwrap_or_else(|| {
        let stem = match &packed.version {
            Some(v)
                if skilldeck_package::check_entry_path(v.as_bytes()).is_ok()
                    && !v.contains('/') =>
            {
                format!("{}-{v}", packed.name)
            }
            _ => packed.name.clone(),
        };
        PathBuf::from(format!("{stem}.{}", format.extension()))
    });
    if let Err(e) = skilldeck_package::write_atomic(&output, &packed.bytes) {
        return refused(e);
    }
    eprintln!(
        "packed {} ({} files, {} bytes) into {}",
        packed.name,
        packed.manifest.files().len(),
        packed.manifest.total_size(),
        output.display()
    );
    if let Err(e) = signing::finish_pack(&output, &packed.fingerprint(), key.as_ref()) {
        return refused(e);
    }
    println!("{}", packed.fingerprint());
    Ok(exit::OK)
}

/// A package error: refusals print their diagnostics (exit 1); other
/// errors end the command (exit 2).
pub fn refused(e: Error) -> Result<u8, CliError> {
    if let Some(code) = signing::render_error(&e) {
        return Ok(code);
    }
    match e {
        Error::Refused(diagnostics) => {
            for d in &diagnostics {
                eprintln!("{}", render::safe(&d.to_string()));
                if let Some(help) = &d.help {
                    eprintln!("  = help: {}", render::safe(help));
                }
            }
            Ok(exit::INVALID)
        }
        Error::Io { path, source } => Err(CliError::Io { path, source }),
        other => Err(CliError::Usage(other.to_string())),
    }
}

/// The skills root of `install` and `verify`: `--dir`, else the project
/// root `.agents/skills` of the current folder.
pub fn skills_root(dir: Option<&Path>) -> Result<PathBuf, CliError> {
    match dir {
        Some(d) => Ok(d.to_path_buf()),
        None => {
            let cwd = std::env::current_dir().map_err(|source| CliError::Io {
                path: PathBuf::from("."),
                source,
            })?;
            Ok(cwd.join(skilldeck::deck::PROJECT_ROOT_NAMES[0]))
        }
    }
}
