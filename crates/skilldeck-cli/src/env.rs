//! Skill environments on the command line: the options `install` builds
//! them with ([`EnvArgs`], over the config's `[environments]`), and
//! `skilldeck env list|gc` over the store.

use std::io::Write;
use std::path::PathBuf;

use skilldeck::environment::EnvStore;
use skilldeck_package::environment::{EnvironmentOptions, gc};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::pack::refused;
use crate::render;

/// How `install` builds the environments of skills that declare
/// dependencies (`requirements.txt`, `pyproject.toml`, `package.json`).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Skill environments")]
pub struct EnvArgs {
    /// Do not build environments: skills that declare dependencies are
    /// installed, but their scripts do not run until an install builds
    /// their environment.
    #[arg(long)]
    no_environments: bool,
    /// Never use the network to get packages: Python packages come from
    /// --find-links folders (and uv's cache) only, Node packages from npm's
    /// cache (--npm-cache).
    #[arg(long)]
    offline: bool,
    /// A folder of wheels packages may come from (repeatable; also
    /// `[environments]` find-links).
    #[arg(long, value_name = "DIR")]
    find_links: Vec<PathBuf>,
    /// A package index instead of PyPI (also `[environments]` index-url).
    #[arg(long, value_name = "URL")]
    index_url: Option<String>,
    /// The uv binary (else `[environments]` uv, SKILLDECK_UV, uv on PATH).
    #[arg(long, value_name = "FILE")]
    uv: Option<PathBuf>,
    /// The interpreter environments are built for (else `[environments]`
    /// python, /usr/bin/python3).
    #[arg(long, value_name = "FILE")]
    python: Option<PathBuf>,
    /// An npm registry instead of the npm registry (also `[environments]`
    /// npm-registry).
    #[arg(long, value_name = "URL")]
    npm_registry: Option<String>,
    /// npm's cache folder (also `[environments]` npm-cache); with
    /// --offline, the only source of Node packages.
    #[arg(long, value_name = "DIR")]
    npm_cache: Option<PathBuf>,
    /// The npm binary (else `[environments]` npm, SKILLDECK_NPM, npm on
    /// PATH).
    #[arg(long, value_name = "FILE")]
    npm: Option<PathBuf>,
    /// The Node interpreter Node environments are built for (else
    /// `[environments]` node, /usr/bin/node).
    #[arg(long, value_name = "FILE")]
    node: Option<PathBuf>,
}

impl EnvArgs {
    /// The build options: these flags over the config's `[environments]`;
    /// `None` with --no-environments.
    pub fn options(&self) -> Result<Option<EnvironmentOptions>, CliError> {
        if self.no_environments {
            return Ok(None);
        }
        let config = skilldeck::Config::discover(None)
            .map_err(|e| CliError::Usage(e.to_string()))?
            .map(|(_, c)| c.environments)
            .unwrap_or_default();
        let find_links = if self.find_links.is_empty() {
            config.find_links
        } else {
            self.find_links
                .iter()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .collect()
        };
        let defaults = EnvironmentOptions::default();
        let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        let options = EnvironmentOptions {
            uv: self.uv.clone().or(config.uv),
            python: self
                .python
                .clone()
                .or(config.python)
                .map_or(defaults.python, |p| std::path::absolute(&p).unwrap_or(p)),
            index_url: self.index_url.clone().or(config.index_url),
            find_links,
            offline: self.offline || config.offline.unwrap_or(false),
            npm: self.npm.clone().or(config.npm),
            node: self
                .node
                .clone()
                .or(config.node)
                .map_or(defaults.node, absolute),
            npm_registry: self.npm_registry.clone().or(config.npm_registry),
            npm_cache: self.npm_cache.clone().map(absolute).or(config.npm_cache),
            store: defaults.store,
        };
        Ok(Some(options))
    }
}

/// `skilldeck env`.
#[derive(Debug, clap::Subcommand)]
pub enum EnvCommand {
    /// List the environments in the store: key, kind, interpreter, packages.
    List {
        /// Output format.
        #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
        format: Format,
    },
    /// Remove the environments no installed skill's lock records (every
    /// lockfile an install used is consulted), and unfinished builds.
    Gc {
        /// Say what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Output format.
        #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
        format: Format,
    },
}

fn store() -> EnvStore {
    skilldeck_host::environment::store()
}

pub fn run(command: &EnvCommand) -> Result<u8, CliError> {
    match command {
        EnvCommand::List { format } => list(*format),
        EnvCommand::Gc { dry_run, format } => {
            let store = store();
            let report = match gc(&store, *dry_run) {
                Ok(r) => r,
                Err(e) => return refused(e),
            };
            let mut out = render::stdout_for(*format == Format::Json);
            if *format == Format::Json {
                render::write_json(&mut out, &report)?;
            } else {
                let verb = if *dry_run { "would remove" } else { "removed" };
                for key in &report.removed {
                    writeln!(out, "{verb} {}", store.path_of(key).display())?;
                }
                for lock in &report.forgotten {
                    writeln!(out, "forgot {} (no longer there)", lock.display())?;
                }
                writeln!(
                    out,
                    "{} environment{} kept ({} lockfile{} read), {} {verb}, {} unfinished build{} {}",
                    report.kept.len(),
                    plural(report.kept.len()),
                    report.locks.len(),
                    plural(report.locks.len()),
                    report.removed.len(),
                    report.leftovers,
                    plural(report.leftovers),
                    if *dry_run { "found" } else { "removed" }
                )?;
            }
            out.flush()?;
            Ok(exit::OK)
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[derive(serde::Serialize)]
struct Listed {
    key: String,
    path: PathBuf,
    complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<skilldeck::environment::EnvKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    python: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<String>,
    packages: Vec<String>,
}

fn list(format: Format) -> Result<u8, CliError> {
    let store = store();
    let mut listed = Vec::new();
    for key in store.keys() {
        let path = store.path_of(&key);
        let marker = store.marker(&key);
        listed.push(Listed {
            key: key.to_string(),
            path,
            complete: marker.is_some(),
            kind: marker.as_ref().map(|m| m.kind),
            python: marker
                .as_ref()
                .filter(|m| m.kind == skilldeck::environment::EnvKind::Python)
                .map(|m| format!("{} {}", m.interpreter, m.python)),
            node: marker
                .as_ref()
                .filter(|m| m.kind == skilldeck::environment::EnvKind::Node)
                .map(|m| format!("{} {}", m.interpreter, m.node)),
            packages: marker.map(|m| m.package_names()).unwrap_or_default(),
        });
    }
    let mut out = render::stdout_for(format == Format::Json);
    if format == Format::Json {
        render::write_json(&mut out, &listed)?;
    } else {
        writeln!(out, "store: {}", store.dir().display())?;
        for l in &listed {
            writeln!(
                out,
                "{} {} {}",
                l.key,
                l.python
                    .as_deref()
                    .or(l.node.as_deref())
                    .unwrap_or("(incomplete: no marker)"),
                l.packages.join(" ")
            )?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
