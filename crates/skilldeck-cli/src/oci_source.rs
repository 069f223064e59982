//! OCI sources: `skilldeck push oci://REGISTRY/REPOSITORY:TAG [DIR]`, and
//! `install oci://...` (a tag resolved to its manifest digest now, or a
//! digest), recorded in the lock as `oci://REGISTRY/REPOSITORY@sha256:...`;
//! `install --frozen` pulls exactly the locked digest. The rules and the
//! transfer are [`skilldeck_source::oci`]'s.

use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck_package::{LockEntry, Lockfile};
use skilldeck_source::oci::{self, Credentials, OciOptions, OciRef, Pulled};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::pack::refused;
use crate::render;

/// How to reach OCI registries (shared by `push` and `install`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OciArgs {
    /// Credentials for OCI registries: a Docker config.json ("auths" by
    /// registry). Else SKILLDECK_OCI_TOKEN, or SKILLDECK_OCI_USERNAME and
    /// SKILLDECK_OCI_PASSWORD, else $DOCKER_CONFIG/config.json or
    /// ~/.docker/config.json, else anonymous.
    #[arg(long, value_name = "FILE", env = "SKILLDECK_OCI_CREDENTIALS")]
    oci_credentials: Option<PathBuf>,
    /// Speak plain http to an OCI registry that is not on this machine
    /// (loopback registries always get http): no integrity or secrecy in
    /// transit; digests are still checked.
    #[arg(long)]
    insecure_http: bool,
}

impl OciArgs {
    pub(crate) fn options(
        &self,
        reference: &OciRef,
    ) -> Result<OciOptions, skilldeck_source::Error> {
        Ok(OciOptions {
            credentials: Credentials::resolve(
                &reference.registry,
                self.oci_credentials.as_deref(),
            )?,
            insecure_http: self.insecure_http,
        })
    }
}

/// True when `text` names an OCI source.
pub fn is_oci(text: &str) -> bool {
    oci::is_oci_source(text)
}

/// Ends a command on an OCI source error: a package refusal prints its
/// diagnostics (exit 1), anything else is a usage error (exit 2).
pub fn failed(e: skilldeck_source::Error) -> Result<u8, CliError> {
    match e {
        skilldeck_source::Error::Package(p) => refused(p),
        other => Err(CliError::Usage(other.to_string())),
    }
}

/// Pulls the OCI source `text` for `install`. With `frozen`, a tag is not
/// resolved: the lock's entry for the repository gives the digest, and
/// its fingerprint must match.
pub fn fetch_for_install(
    text: &str,
    args: &OciArgs,
    lock: Option<&Lockfile>,
    lockfile: &Path,
    frozen: bool,
) -> Result<Pulled, skilldeck_source::Error> {
    let reference = OciRef::parse(text)?;
    let options = args.options(&reference)?;
    if !frozen {
        return oci::pull(&reference, None, &options);
    }
    let entry = lock.and_then(|l| {
        l.skill.iter().find(|(_, e)| {
            OciRef::parse(&e.source).is_ok_and(|r| {
                r.name() == reference.name() && reference.digest.is_none_or(|d| r.digest == Some(d))
            })
        })
    });
    match entry {
        Some((name, entry)) => fetch_locked_entry(name, entry, lockfile, &options),
        None => Err(skilldeck_source::Error::Oci {
            reference: text.to_owned(),
            message: format!(
                "{} has no skill from {}{}: a frozen install installs only what the lock \
                 records (install without --frozen to add it)",
                lockfile.display(),
                reference.name(),
                reference
                    .digest
                    .map(|d| format!(" at {d}"))
                    .unwrap_or_default()
            ),
        }),
    }
}

/// Pulls a lock entry's OCI source at exactly its locked digest, refused
/// unless it has the locked fingerprint (`install --frozen`).
pub fn fetch_locked(
    name: &str,
    entry: &LockEntry,
    lockfile: &Path,
    args: &OciArgs,
) -> Result<Pulled, skilldeck_source::Error> {
    let reference = OciRef::parse(&entry.source)?;
    let options = args.options(&reference)?;
    fetch_locked_entry(name, entry, lockfile, &options)
}

fn fetch_locked_entry(
    name: &str,
    entry: &LockEntry,
    lockfile: &Path,
    options: &OciOptions,
) -> Result<Pulled, skilldeck_source::Error> {
    let reference = OciRef::parse(&entry.source)?;
    if reference.digest.is_none() {
        return Err(skilldeck_source::Error::Oci {
            reference: entry.source.clone(),
            message: format!(
                "{}: skill '{name}' records no manifest digest (oci://REGISTRY/REPOSITORY@sha256:...): \
                 install it again without --frozen to record one",
                lockfile.display()
            ),
        });
    }
    let mut pulled = oci::pull(&reference, Some(&entry.fingerprint), options)?;
    // Exactly what the lock says (a followed tag stays recorded).
    pulled.source = entry.source.clone();
    Ok(pulled)
}

/// Says on standard error what a pull could not check.
pub fn note(pulled: &Pulled) {
    if !pulled.annotated {
        eprintln!(
            "{}",
            render::safe(&format!(
                "note: {} carries no {} annotation (not pushed by skilldeck): its fingerprint \
                 {} is the content's, recorded in the lock from now on",
                pulled.source,
                oci::artifact::ANNOTATION_FINGERPRINT,
                pulled.fingerprint
            ))
        );
    }
}

/// `skilldeck push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// Where to push: oci://REGISTRY/REPOSITORY:TAG (no tag: pushed by
    /// its digest only).
    reference: String,
    /// The skill folder (default: the current folder).
    #[arg(default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    oci: OciArgs,
    /// Output format.
    #[arg(long = "output", value_parser = Format::parser(format::TABLE), default_value = "text")]
    output: Format,
    #[command(flatten)]
    audit: crate::audit::Gate,
}

/// Packs the skill folder and pushes it as an OCI artifact; prints the
/// manifest digest and the reference to install it by.
pub fn push(args: &PushArgs) -> Result<u8, CliError> {
    let reference = OciRef::parse(&args.reference).map_err(|e| CliError::Usage(e.to_string()))?;
    if let Some(code) = args.audit.check(&[args.dir.as_path()], "push")? {
        return Ok(code);
    }
    let options = match args.oci.options(&reference) {
        Ok(o) => o,
        Err(e) => return failed(e),
    };
    let pushed = match oci::push(&args.dir, &reference, &options) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    for w in &pushed.warnings {
        eprintln!("{}", render::safe(&w.to_string()));
    }
    let mut out = render::stdout_for(args.output == Format::Json);
    if args.output == Format::Json {
        render::write_json(&mut out, &pushed)?;
    } else {
        writeln!(
            out,
            "pushed {}{} {} to {} as {}",
            pushed.name,
            pushed
                .version
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default(),
            pushed.fingerprint,
            pushed.reference,
            pushed.digest
        )?;
        writeln!(
            out,
            "install it with: skilldeck install {}",
            pushed.canonical
        )?;
    }
    out.flush()?;
    Ok(exit::OK)
}
