//! `skilldeck doctor`: where skills come from and what happened to each.
//! Every fact comes from the core and the host (the roots discovery
//! searched, the config files it looked at, the catalog's explanation);
//! this module only renders them.

use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck::catalog::Outcome;
use skilldeck::{Config, Diagnostic, RootReport, Scope, SkillMode};
use skilldeck_host::{Host, HostOptions};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// One config file looked at.
#[derive(serde::Serialize)]
struct ConfigFile {
    path: PathBuf,
    exists: bool,
    read: bool,
}

/// A skill left out of the catalog, or kept in it by name only.
#[derive(serde::Serialize)]
struct Excluded<'a> {
    name: &'a str,
    why: &'static str,
}

/// A shadowed skill and its winner.
#[derive(serde::Serialize)]
struct ShadowedRow<'a> {
    name: &'a str,
    scope: Scope,
    dir: &'a Path,
    winner_scope: Scope,
    winner_dir: &'a Path,
}

/// The catalog in the `activate_skill` description against its budget.
#[derive(serde::Serialize)]
struct CatalogRow {
    size: usize,
    budget: Option<usize>,
    unit: &'static str,
    listed: usize,
    kept: usize,
    shortened: usize,
    name_only: usize,
    unlisted: usize,
    excluded: usize,
}

#[derive(serde::Serialize)]
struct Report<'a> {
    config_files: Vec<ConfigFile>,
    /// Each key a config file set, and the file whose value is in force.
    settings: &'a std::collections::BTreeMap<String, PathBuf>,
    roots: &'a [RootReport],
    found: usize,
    loaded: usize,
    skipped: Vec<&'a Diagnostic>,
    shadowed: Vec<ShadowedRow<'a>>,
    excluded: Vec<Excluded<'a>>,
    /// Declared tools left out (a problem in their entry) or not offered
    /// (host-implemented, no handler here), each at its file and line.
    tools: Vec<Diagnostic>,
    /// Skills that declare dependencies whose environment cannot be used
    /// (their scripts do not run, their tools are not offered).
    environments: Vec<Diagnostic>,
    catalog: CatalogRow,
}

fn excluded_because(skill: &skilldeck::Skill) -> Option<&'static str> {
    match skill.mode {
        SkillMode::Off => Some("mode off: not served"),
        SkillMode::Manual => Some("mode manual: the user may invoke it, the model may not"),
        SkillMode::NameOnly => Some("mode name-only: listed without its description"),
        _ if !skill.model_invocable() => {
            Some("disable-model-invocation: the user may invoke it, the model may not")
        }
        _ => None,
    }
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let deck = ctx.quiet_deck();
    // Lowest precedence first, as they merge.
    let config_files = Config::candidates(ctx.config_flag.as_deref())
        .into_iter()
        .rev()
        .map(|path| ConfigFile {
            exists: path.is_file(),
            read: ctx.config_files.contains(&path),
            path,
        })
        .collect();
    let skipped: Vec<&Diagnostic> = deck.diagnostics().iter().filter(|d| d.is_error()).collect();
    let host_options = HostOptions::from_config(&ctx.config, ctx.discovery_options())?;
    let catalog = host_options.render_tool_catalog(deck)?;
    // What the host does not offer of the declared tools: its rule.
    let host = Host::with_deck(host_options.clone(), deck.clone())?;
    let tools: Vec<Diagnostic> = host
        .unoffered_tools(&host.snapshot())
        .into_iter()
        .filter(|d| !d.code.is_environment_problem())
        .collect();
    let environments = skilldeck_host::environment::problems(&ctx.config.exec, deck);
    let e = &catalog.explanation;
    let catalog = CatalogRow {
        size: e.size,
        budget: e.budget.map(skilldeck::Budget::limit),
        unit: e.budget.map_or("characters", skilldeck::Budget::unit),
        listed: e.skills().len() - e.count(Outcome::Dropped) - e.count(Outcome::Excluded),
        kept: e.count(Outcome::Kept),
        shortened: e.count(Outcome::Shortened { from: 0, to: 0 }),
        name_only: e.count(Outcome::NameOnly),
        unlisted: e.count(Outcome::Dropped),
        excluded: e.count(Outcome::Excluded),
    };
    let report = Report {
        config_files,
        settings: &ctx.config_origins,
        roots: deck.roots(),
        found: deck
            .roots()
            .iter()
            .filter(|r| r.used)
            .map(|r| r.found)
            .sum::<usize>()
            + ctx.config.skills.len(),
        loaded: deck.len(),
        skipped,
        shadowed: deck
            .shadowed()
            .iter()
            .map(|s| ShadowedRow {
                name: &s.skill.name,
                scope: s.skill.scope,
                dir: s.skill.dir(),
                winner_scope: s.winner_scope,
                winner_dir: &s.winner_dir,
            })
            .collect(),
        excluded: deck
            .skills()
            .iter()
            .filter_map(|s| excluded_because(s).map(|why| Excluded { name: &s.name, why }))
            .collect(),
        tools,
        environments,
        catalog,
    };
    let mut out = render::stdout_for(args.format == Format::Json);
    match args.format {
        Format::Json => render::write_json(&mut out, &report)?,
        // The parser admits only json and text.
        _ => write_text(&mut out, &report)?,
    }
    out.flush()?;
    Ok(exit::OK)
}

fn yes_no(b: bool, yes: &'static str, no: &'static str) -> &'static str {
    if b { yes } else { no }
}

fn write_text(out: &mut impl Write, r: &Report<'_>) -> std::io::Result<()> {
    writeln!(
        out,
        "config files (merged key by key; a later file wins each key it sets):"
    )?;
    for c in &r.config_files {
        let state = match (c.read, c.exists) {
            (true, _) => "read",
            (false, true) => "exists, not read",
            (false, false) => "missing",
        };
        writeln!(out, "  {:<18} {}", state, c.path.display())?;
    }
    if r.config_files.iter().filter(|c| c.read).count() > 1 {
        writeln!(out, "\nsettings, and the file each comes from:")?;
        for (key, file) in r.settings {
            writeln!(out, "  {key:<32} {}", file.display())?;
        }
    }
    writeln!(out, "\nroots, highest precedence first:")?;
    for root in r.roots {
        let state = if !root.exists {
            "missing".to_owned()
        } else if !root.used {
            format!(
                "{} skills, not used (bundled = \"fallback\": other roots have skills)",
                root.found
            )
        } else {
            format!("{} skill{}", root.found, yes_no(root.found == 1, "", "s"))
        };
        writeln!(
            out,
            "  {:<8} {}  ({state})",
            root.scope.as_str(),
            root.path.display()
        )?;
    }
    writeln!(
        out,
        "\nskills: {} found, {} loaded, {} skipped, {} shadowed, {} excluded",
        r.found,
        r.loaded,
        r.skipped.len(),
        r.shadowed.len(),
        r.excluded.len()
    )?;
    if !r.skipped.is_empty() {
        writeln!(out, "\nskipped (fix these to load the skill):")?;
        for d in &r.skipped {
            writeln!(out, "  {d}")?;
        }
    }
    if !r.shadowed.is_empty() {
        writeln!(out, "\nshadowed (a skill of the same name wins):")?;
        for s in &r.shadowed {
            writeln!(
                out,
                "  {} ({}, {}) by the {} skill at {}",
                s.name,
                s.scope,
                s.dir.display(),
                s.winner_scope,
                s.winner_dir.display()
            )?;
        }
    }
    if !r.tools.is_empty() {
        writeln!(out, "\ndeclared tools left out or not offered:")?;
        for d in &r.tools {
            writeln!(out, "  {d}")?;
        }
    }
    if !r.environments.is_empty() {
        writeln!(
            out,
            "\nskill environments not ready (these skills' scripts do not run):"
        )?;
        for d in &r.environments {
            writeln!(out, "  {d}")?;
            if let Some(help) = &d.help {
                writeln!(out, "    = help: {help}")?;
            }
        }
    }
    if !r.excluded.is_empty() {
        writeln!(out, "\nexcluded from the model's catalog:")?;
        for x in &r.excluded {
            writeln!(out, "  {}: {}", x.name, x.why)?;
        }
    }
    let c = &r.catalog;
    let budget = c.budget.map_or_else(
        || "no budget".to_owned(),
        |b| format!("budget {b} {}", c.unit),
    );
    writeln!(
        out,
        "\ncatalog (activate_skill description): {} {} of {budget}; {} listed ({} whole, {} shortened, {} name only), {} not listed (the model finds them with search_skills), {} excluded",
        c.size, c.unit, c.listed, c.kept, c.shortened, c.name_only, c.unlisted, c.excluded
    )?;
    Ok(())
}
