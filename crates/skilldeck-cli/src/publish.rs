//! `skilldeck publish DIR|PACKAGE --registry URL`: a skill folder (packed
//! first, deterministically) or a package file, published to a registry.
//! Prints what was published, or the refusal's diagnostics as
//! `file:line:col: code message`.

use std::io::Write;
use std::path::PathBuf;

use skilldeck_package::{ArchiveFormat, PackOptions, UnpackOptions};
use skilldeck_registry::client::diagnostic_line;
use skilldeck_registry::names::namespace_or_default;

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::pack::refused;
use crate::registry_client::{ClientArgs, failed};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A skill folder (packed as tar.gz first) or a package (.tar.gz, .zip);
    /// with -r, a folder holding skill folders.
    path: PathBuf,
    /// The version (else the SKILL.md's `metadata.version`); with -r, the
    /// version of the skills that have no `metadata.version`.
    #[arg(long, value_name = "SEMVER")]
    version: Option<String>,
    /// Publish every skill folder under PATH, one line each; a skill whose
    /// content is already published (same fingerprint) is not uploaded
    /// again. One skill's refusal does not stop the others.
    #[arg(short, long)]
    recursive: bool,
    /// The namespace to publish into [default: default].
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,
    /// Sign the version with this SSH private key (ed25519 or ECDSA; its
    /// public key registered for the namespace). Without it, a package's
    /// `PACKAGE.sig` (from `pack --sign`) is uploaded when present.
    #[arg(long, value_name = "KEY")]
    sign: Option<PathBuf>,
    #[command(flatten)]
    client: ClientArgs,
    #[command(flatten)]
    audit: crate::audit::Gate,
    /// How the skill's dependencies are resolved before upload (the
    /// resolution is stored with the version, and every consumer installs
    /// exactly it); --no-environments publishes without one.
    #[command(flatten)]
    env: crate::env::EnvArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    let namespace = namespace_or_default(args.namespace.as_deref())
        .map_err(|e| CliError::Usage(e.to_string()))?;
    if args.recursive {
        if !args.path.is_dir() {
            return Err(CliError::Usage(format!(
                "-r: {} is not a folder (pass the folder holding the skill folders)",
                args.path.display()
            )));
        }
        let key = match args
            .sign
            .as_deref()
            .map(crate::signing::load_key)
            .transpose()
        {
            Ok(key) => key,
            Err(e) => return refused(e),
        };
        return crate::publish_tree::run(
            &args.path,
            &crate::publish_tree::TreeArgs {
                namespace: &namespace,
                version: args.version.as_deref(),
                key: key.as_ref(),
                audit: &args.audit,
                environments: args.env.options()?,
                client: args.client.client()?,
                format: args.format,
            },
        );
    }
    if let Some(code) = args.audit.check(&[args.path.as_path()], "publish")? {
        return Ok(code);
    }
    // The key first: a bad key uploads nothing.
    let key = match args
        .sign
        .as_deref()
        .map(crate::signing::load_key)
        .transpose()
    {
        Ok(key) => key,
        Err(e) => return refused(e),
    };
    let env_options = args.env.options()?;
    let (bytes, fingerprint, environments) = if args.path.is_dir() {
        // Validated as the registry validates (lenient, no lints): what it
        // would refuse is refused here, with the same diagnostics.
        let options = PackOptions {
            format: ArchiveFormat::TarGz,
            validation: UnpackOptions::default().validation,
            ..PackOptions::default()
        };
        match skilldeck_package::pack(&args.path, &options) {
            Ok(p) => {
                // The packing's own warnings (a link inside the skill
                // packed as content); validation's are the registry's to
                // report.
                for w in p
                    .warnings
                    .iter()
                    .filter(|w| w.code == skilldeck::Code::PackageLink)
                {
                    eprintln!("{}", crate::render::safe(&w.to_string()));
                }
                let fingerprint = p.manifest.fingerprint();
                // Resolved before anything is uploaded: a requirement that
                // does not resolve refuses the publish.
                let environments = match &env_options {
                    Some(o) => match crate::publish_tree::resolve(&p.name, &args.path, o) {
                        Ok(envs) => envs,
                        Err(e) => return refused(e),
                    },
                    None => Vec::new(),
                };
                (p.bytes, Some(fingerprint), environments)
            }
            Err(e) => return refused(e),
        }
    } else {
        let bytes = std::fs::read(&args.path).map_err(|source| CliError::Io {
            path: args.path.clone(),
            source,
        })?;
        let environments = match &env_options {
            Some(o) => match package_environments(&args.path, &bytes, o) {
                Ok(envs) => envs,
                Err(e) => return refused(e),
            },
            None => Vec::new(),
        };
        (bytes, None, environments)
    };
    let signature = match &key {
        Some(key) => {
            let fingerprint = match fingerprint {
                Some(f) => f,
                None => match package_fingerprint(&args.path, &bytes) {
                    Ok(f) => f,
                    Err(e) => return refused(e),
                },
            };
            match skilldeck_package::signature::sign(&fingerprint, key) {
                Ok(s) => Some(s.to_armored().into_bytes()),
                Err(e) => return refused(e),
            }
        }
        // A package signed by `pack --sign`: its signature goes with it.
        None if !args.path.is_dir() => {
            match skilldeck_package::signature::read_signature(&args.path) {
                Ok(found) => found.map(|(_, bytes)| bytes),
                Err(e) => return refused(e),
            }
        }
        None => None,
    };
    let client = args.client.client()?;
    let published = match client.publish_with(
        &namespace,
        args.version.as_deref(),
        bytes,
        signature.as_deref(),
        &environments,
    ) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let mut out = render::stdout_for(args.format == Format::Json);
    if args.format == Format::Json {
        render::write_json(&mut out, &published)?;
    } else {
        writeln!(
            out,
            "{} {}/{}@{} {} ({} bytes){}",
            if published.created {
                "published"
            } else {
                "unchanged (already published)"
            },
            published.namespace,
            published.name,
            published.version,
            published.fingerprint,
            published.size,
            published
                .latest
                .as_deref()
                .map(|l| format!("; latest is {l}"))
                .unwrap_or_default()
        )?;
        for d in &published.report {
            writeln!(out, "{}", diagnostic_line(d))?;
        }
        for env in &published.environments {
            writeln!(
                out,
                "{} dependencies resolved for {} {}: {}",
                env.kind.as_str(),
                env.interpreter,
                env.interpreter_version(),
                render::safe(&env.package_list())
            )?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}

/// The content fingerprint of the package `bytes` (unpacked into a
/// temporary folder, with the unpacker's refusals).
fn package_fingerprint(
    path: &std::path::Path,
    bytes: &[u8],
) -> Result<skilldeck::Digest, skilldeck_package::Error> {
    let tmp = tempfile::tempdir().map_err(|e| skilldeck_package::Error::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let read = skilldeck_package::unpack_bytes(
        bytes,
        path,
        &tmp.path().join("staging"),
        &UnpackOptions::default(),
    )?;
    Ok(read.unpacked.manifest.fingerprint())
}

/// The resolution of what the skill in package `path` (`bytes`) declares:
/// unpacked into a temporary folder, resolved there.
fn package_environments(
    path: &std::path::Path,
    bytes: &[u8],
    options: &skilldeck_package::environment::EnvironmentOptions,
) -> Result<Vec<skilldeck::environment::LockedEnvironment>, skilldeck_package::Error> {
    let tmp = tempfile::tempdir().map_err(|e| skilldeck_package::Error::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let read = skilldeck_package::unpack_bytes(
        bytes,
        path,
        &tmp.path().join("staging"),
        &UnpackOptions::default(),
    )?;
    crate::publish_tree::resolve(&read.unpacked.name, &read.unpacked.dir, options)
}
