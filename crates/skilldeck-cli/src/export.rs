//! `skilldeck export claude-plugin|codex-plugin ROOT -o DIR`: the skills
//! of a root as a plugin with its marketplace entry and fingerprints
//! ([`skilldeck_package::export_plugin`] holds the rules).

use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck::plugin::PluginKind;
use skilldeck_package::{ExportOptions, UnpackOptions};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::pack::refused;
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The kind of plugin: claude-plugin (Claude Code) or codex-plugin
    /// (Codex).
    #[arg(value_parser = ["claude-plugin", "codex-plugin"])]
    kind: String,
    /// The skills root whose skills are exported.
    root: PathBuf,
    /// The output folder (a marketplace with the plugin in it); must be
    /// empty or missing unless --force.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,
    /// The plugin's name (its skills become NAME:SKILL); default: the
    /// root's project folder name.
    #[arg(long)]
    name: Option<String>,
    /// The plugin's version (default 0.1.0).
    #[arg(long = "plugin-version", value_name = "VERSION")]
    plugin_version: Option<String>,
    /// The plugin's description (default: its skills, listed).
    #[arg(long)]
    description: Option<String>,
    /// The author and marketplace owner (default: the plugin's name).
    #[arg(long)]
    author: Option<String>,
    /// The root's lockfile, whose fingerprints each skill must match
    /// (default: skilldeck.lock next to the root).
    #[arg(long, value_name = "FILE")]
    lock: Option<PathBuf>,
    /// Replace a non-empty output folder.
    #[arg(long)]
    force: bool,
    /// Output format.
    #[arg(long = "output", value_parser = Format::parser(format::TABLE), default_value = "text")]
    output: Format,
}

/// Folder names that say where skills are, not whose they are: a default
/// name skips them (`~/work/acme/.agents/skills` → `acme`).
const ROOT_FOLDER_NAMES: [&str; 4] = ["skills", ".agents", ".claude", ".skills"];

/// The default plugin name of `root`: the nearest folder name that is
/// not a skills folder's, made a slug.
fn default_name(root: &Path) -> Option<String> {
    let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    real.components()
        .rev()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|n| !ROOT_FOLDER_NAMES.contains(n) && !n.is_empty() && *n != "/")
        .and_then(|n| skilldeck::spec::suggest_name(n, skilldeck::NameCharset::Ascii))
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    let kind = PluginKind::parse(&args.kind)
        .ok_or_else(|| CliError::Usage(format!("unknown plugin kind '{}'", args.kind)))?;
    let name = match &args.name {
        Some(n) => n.clone(),
        None => default_name(&args.root).ok_or_else(|| {
            CliError::Usage(format!(
                "no plugin name can be made from {}: pass --name NAME",
                args.root.display()
            ))
        })?,
    };
    let options = ExportOptions {
        kind,
        name,
        version: args.plugin_version.clone(),
        description: args.description.clone(),
        author: args.author.clone(),
        force: args.force,
        unpack: UnpackOptions::default(),
        lockfile: args.lock.clone(),
    };
    let exported = match skilldeck_package::export_plugin(&args.root, &args.out, &options) {
        Ok(e) => e,
        Err(e) => return refused(e),
    };
    let mut out = render::stdout_for(args.output == Format::Json);
    if args.output == Format::Json {
        render::write_json(&mut out, &exported)?;
    } else {
        for s in &exported.skills {
            let line = format!(
                "exported {}{} {} as {}",
                s.name,
                s.version
                    .as_deref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default(),
                s.fingerprint,
                s.qualified
            );
            writeln!(out, "{}", render::safe(&line))?;
        }
        let line = format!(
            "wrote {} {} {} ({} skill{}) to {}",
            exported.kind,
            exported.plugin,
            exported.version,
            exported.skills.len(),
            if exported.skills.len() == 1 { "" } else { "s" },
            exported.out.display()
        );
        writeln!(out, "{}", render::safe(&line))?;
    }
    out.flush()?;
    Ok(exit::OK)
}
