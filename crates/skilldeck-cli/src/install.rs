//! `skilldeck install SOURCE...`: packages or skill folders into a skills
//! root, atomically, recorded in `skilldeck.lock`. With `--registry URL`,
//! each SOURCE is `[NS/]NAME[@VERSION|@LABEL]` (a bare NAME is in the
//! `default` namespace, as `publish` puts it): the version is downloaded,
//! checked against its manifest's fingerprint, and recorded with the
//! source `registry+URL#ns/name@version`; `--frozen` downloads exactly the
//! locked version again (from the URL the lock records). A git source
//! (`git+https://...`, `git+file://...`, `github:...`) is resolved and
//! written out of the repository ([`crate::git_source`]) and recorded with
//! its commit; `--frozen` fetches exactly the locked commit. An OCI source
//! (`oci://REGISTRY/REPOSITORY:TAG` or `...@sha256:...`) is pulled and
//! checked ([`crate::oci_source`]) and recorded by its manifest digest;
//! `--frozen` pulls exactly the locked digest. A marketplace entry
//! (`marketplace:PATH#PLUGIN[:SKILL]`) installs a plugin's skills
//! ([`crate::marketplace_source`]). A well-known source (`https://HOST[/PATH]#NAME`) is read from the host's
//! agentskills.io discovery index ([`crate::wellknown_source`]), each
//! artifact checked against its digest, and recorded as
//! `wellknown+INDEX-URL#NAME`; `--list` shows the index.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use skilldeck_package::{Action, InstallOptions, Lockfile, Source, is_fetched, lock_path};
use skilldeck_registry::client::parse_lock_source;

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::git_source;
use crate::marketplace_source;
use crate::oci_source;
use crate::pack::{refused, skills_root};
use crate::registry_client::{self, Fetched};
use crate::render;

/// Test hook (documented in docs/design.md): milliseconds to sleep after
/// each install step, so a test can kill the process between any two.
pub const PAUSE_ENV: &str = "SKILLDECK_TEST_INSTALL_PAUSE_MS";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Package files (.tar.gz, .zip), skill folders, git sources
    /// (git+https://HOST/REPO[#REF][:PATH], git+file:///PATH/REPO[#REF][:PATH],
    /// github:OWNER/REPO[/PATH][@REF]), OCI artifacts
    /// (oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:DIGEST),
    /// plugin marketplace entries (marketplace:PATH#PLUGIN[:SKILL]), or a
    /// host's well-known skills index (https://HOST[/PATH][#NAME]:
    /// /.well-known/agent-skills/index.json); with --registry,
    /// [NS/]NAME, [NS/]NAME@VERSION or [NS/]NAME@LABEL (no NS/: the
    /// `default` namespace, as publish uses). With --frozen and none given: every skill
    /// of the lock, from its recorded source.
    // The brackets are the help text's notation, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    sources: Vec<PathBuf>,
    /// The skills root (default: .agents/skills of the current folder).
    #[arg(long, visible_alias = "root", value_name = "ROOT")]
    dir: Option<PathBuf>,
    /// Install [NS/]NAME, [NS/]NAME@VERSION or [NS/]NAME@LABEL from this
    /// registry.
    #[arg(long, value_name = "URL")]
    registry: Option<String>,
    /// The registry's bearer token file (else SKILLDECK_TOKEN); a
    /// `read:NS` token installs from namespace NS.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
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
    /// With a well-known source (https://HOST): install this skill of its
    /// index (repeatable; as well as a #NAME in the URL).
    #[arg(long = "skill", value_name = "NAME")]
    skills: Vec<String>,
    /// With a well-known source: list the skills its index offers (name,
    /// version, type, digest, description); install nothing.
    #[arg(long)]
    list: bool,
    /// Allow plain http:// well-known sources on other hosts than this
    /// machine (loopback http is always allowed; https is the default).
    #[arg(long)]
    allow_http: bool,
    #[command(flatten)]
    trust: crate::signing::TrustArgs,
    #[command(flatten)]
    oci: crate::oci_source::OciArgs,
    /// Output format.
    #[arg(long = "output", value_parser = Format::parser(format::TABLE), default_value = "text")]
    output: Format,
    #[command(flatten)]
    audit: crate::audit::Gate,
    #[command(flatten)]
    environments: crate::env::EnvArgs,
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    if args.sources.is_empty() && !args.frozen {
        return Err(CliError::Usage(
            "install needs at least one SOURCE (a package file or a skill folder), or --frozen"
                .into(),
        ));
    }
    if args.list {
        let mut out = std::io::stdout().lock();
        for p in &args.sources {
            let text = p.to_string_lossy();
            if !crate::wellknown_source::is_well_known(&text) {
                return Err(CliError::Usage(format!(
                    "--list reads a well-known index: '{text}' is not an https:// source"
                )));
            }
            crate::wellknown_source::list(&text, args.allow_http, &mut out)?;
        }
        out.flush()?;
        return Ok(exit::OK);
    }
    let root = skills_root(args.dir.as_deref())?;
    let step_pause = std::env::var(PAUSE_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis);
    let signatures = match args.trust.policy() {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    let options = InstallOptions {
        signatures,
        force: args.force,
        frozen: args.frozen,
        lockfile: args.lock.clone(),
        step_pause,
        environments: args.environments.options()?,
        ..InstallOptions::default()
    };
    // Downloaded packages live until the install is done.
    let mut fetched: Vec<Fetched> = Vec::new();
    // What the sources fetched (checkouts, pulled artifacts, plugins,
    // downloads) lives until the install is done.
    let mut held = Held::default();
    let sources: Vec<Source> = if let Some(url) = &args.registry {
        let client = registry_client::client_for(url, args.token_file.as_deref())?;
        for spec in &args.sources {
            let (skill, version) = registry_client::parse_spec(&spec.to_string_lossy())?;
            fetched.push(registry_client::fetch(
                &client,
                &skill,
                &version,
                None,
                &std::env::temp_dir(),
            )?);
        }
        fetched.iter().map(|f| f.source.clone()).collect()
    } else if args.frozen && args.sources.is_empty() {
        match frozen_sources(&root, args, &mut fetched, &mut held)? {
            Ok(s) => s,
            Err(code) => return Ok(code),
        }
    } else {
        let lockfile = args.lock.clone().unwrap_or_else(|| lock_path(&root));
        let lock = Lockfile::load(&lockfile).ok().flatten();
        let mut out = Vec::with_capacity(args.sources.len());
        for p in &args.sources {
            let text = p.to_string_lossy();
            if oci_source::is_oci(&text) && !p.exists() {
                match oci_source::fetch_for_install(
                    &text,
                    &args.oci,
                    lock.as_ref(),
                    &lockfile,
                    args.frozen,
                ) {
                    Ok(o) => {
                        oci_source::note(&o);
                        out.push(o.to_source());
                        held.pulled.push(o);
                    }
                    Err(e) => return oci_source::failed(e),
                }
            } else if marketplace_source::is_marketplace(&text) && !p.exists() {
                let (plugin, sources) =
                    marketplace_source::fetch_for_install(&text, &lockfile, &std::env::temp_dir())?;
                held.plugins.push(plugin);
                out.extend(sources);
            } else if git_source::is_git(&text) && !p.exists() {
                let (checkout, source) =
                    git_source::fetch_for_install(&text, lock.as_ref(), &std::env::temp_dir())?;
                held.checkouts.push(checkout);
                out.push(source);
            } else if crate::wellknown_source::is_well_known(&text) {
                for f in crate::wellknown_source::fetch_for_install(
                    &text,
                    &args.skills,
                    args.allow_http,
                    &std::env::temp_dir(),
                )? {
                    out.push(f.source.clone());
                    held.downloads.push(f);
                }
            } else {
                out.push(Source::from_path(p));
            }
        }
        out
    };
    let paths: Vec<&std::path::Path> = sources.iter().map(Source::path).collect();
    let index = crate::audit::install_index(options.environments.as_ref());
    if let Some(code) = args.audit.check_with_index(&paths, "install", index)? {
        return Ok(code);
    }
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
            let tag = held
                .pulled
                .iter()
                .find(|p| p.source == i.source)
                .and_then(|p| p.tag.as_deref())
                // A source that follows its tag names it already.
                .filter(|t| !i.source.contains(&format!(":{t}@")))
                .map(|t| format!(" (tag {t})"))
                .unwrap_or_default();
            writeln!(
                out,
                "{verb} {}{} {} from {}{}{tag}",
                i.name,
                i.version
                    .as_deref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default(),
                i.fingerprint,
                i.source,
                i.commit
                    .as_deref()
                    .map(|c| format!(" at commit {c}"))
                    .unwrap_or_default()
            )?;
            if let Some(v) = &i.signed {
                writeln!(out, "  signed by {}{}", v.signer, principals(&v.principals))?;
            }
            for env in &i.environments {
                let how = match env.built {
                    skilldeck_package::environment::Built::Created => "built",
                    skilldeck_package::environment::Built::Reused => "shared",
                };
                let kind = match env.kind {
                    skilldeck::environment::EnvKind::Python => "",
                    skilldeck::environment::EnvKind::Node => "node ",
                };
                writeln!(
                    out,
                    "  {kind}environment {how}: {} ({})",
                    env.packages.join(" "),
                    env.path.display()
                )?;
                if let Some(note) = &env.note {
                    writeln!(out, "  {kind}environment: {}", render::safe(note))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(exit::OK)
}

/// ` (alice@example.com)` for the allowed-signers principals, if any.
pub fn principals(list: &[String]) -> String {
    if list.is_empty() {
        String::new()
    } else {
        format!(" ({})", list.join(", "))
    }
}

/// What the sources fetched into temporary folders: each value keeps its
/// folder alive until the install has copied from it.
#[derive(Default)]
struct Held {
    checkouts: Vec<skilldeck_source::git::GitCheckout>,
    pulled: Vec<skilldeck_source::oci::Pulled>,
    plugins: Vec<skilldeck_source::marketplace::FetchedPlugin>,
    downloads: Vec<crate::wellknown_source::Fetched>,
}

/// The sources of a frozen install with none given: every lock entry,
/// registry ones downloaded again at exactly their version (checked
/// against the lock's fingerprint), the others from their recorded path.
/// Empty when the lock has no registry entry (the package crate then reads
/// the lock itself). `Err(code)`: a pulled artifact was refused (its
/// diagnostics printed).
fn frozen_sources(
    root: &std::path::Path,
    args: &Args,
    fetched: &mut Vec<Fetched>,
    held: &mut Held,
) -> Result<Result<Vec<Source>, u8>, CliError> {
    let lockfile = args.lock.clone().unwrap_or_else(|| lock_path(root));
    let lock = match Lockfile::load(&lockfile) {
        Ok(Some(lock)) => lock,
        // No lock, or a broken one: the install says so.
        _ => return Ok(Ok(Vec::new())),
    };
    if !lock
        .skill
        .values()
        .any(|e| is_fetched(&e.source) || marketplace_source::is_marketplace(&e.source))
    {
        return Ok(Ok(Vec::new()));
    }
    let mut sources = Vec::with_capacity(lock.skill.len());
    for (name, entry) in &lock.skill {
        if marketplace_source::is_marketplace(&entry.source) {
            let (plugin, source) =
                marketplace_source::fetch_locked(name, entry, &lockfile, &std::env::temp_dir())?;
            held.plugins.push(plugin);
            sources.push(source);
            continue;
        }
        if oci_source::is_oci(&entry.source) {
            match oci_source::fetch_locked(name, entry, &lockfile, &args.oci) {
                Ok(o) => {
                    oci_source::note(&o);
                    sources.push(o.to_source());
                    held.pulled.push(o);
                }
                Err(e) => return oci_source::failed(e).map(Err),
            }
            continue;
        }
        if git_source::is_git(&entry.source) {
            let (checkout, source) =
                git_source::fetch_locked(name, entry, &lockfile, &std::env::temp_dir())?;
            held.checkouts.push(checkout);
            sources.push(source);
            continue;
        }
        if crate::wellknown_source::is_well_known(&entry.source) {
            let f = crate::wellknown_source::fetch_locked(
                name,
                entry,
                args.allow_http,
                &std::env::temp_dir(),
            )?;
            sources.push(f.source.clone());
            held.downloads.push(f);
            continue;
        }
        if !is_fetched(&entry.source) {
            sources.push(Source::from_path(&skilldeck_package::resolve_source(
                &entry.source,
                &lockfile,
            )));
            continue;
        }
        let (url, skill, version) = parse_lock_source(&entry.source).ok_or_else(|| {
            CliError::Usage(format!(
                "{}: skill '{name}' has a source this skilldeck cannot fetch: {}",
                lockfile.display(),
                entry.source
            ))
        })?;
        let client = registry_client::client_for(&url, args.token_file.as_deref())?;
        let f = registry_client::fetch(
            &client,
            &skill,
            &version,
            Some(&entry.fingerprint),
            &std::env::temp_dir(),
        )?;
        sources.push(f.source.clone());
        fetched.push(f);
    }
    Ok(Ok(sources))
}
