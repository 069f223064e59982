//! What every deck-using command shares: the skill-source options, the
//! config, the roots, the deck.

use std::path::PathBuf;

use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use skilldeck::{Deck, Severity};
use skilldeck_host::{Host, HostConfig, HostSpec};

use crate::error::CliError;

/// Where skills and settings come from: declared once, flattened into the
/// commands that discover skills.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Skill sources")]
pub struct DeckArgs {
    /// Config file (default: ./skilldeck.toml, then $XDG_CONFIG_HOME/skilldeck/config.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Search only this skill root (repeatable); replaces the default roots
    /// (project, user, bundled). Config `roots` and `[[skill]]` entries stay.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,

    /// Use the on-disk metadata index (also `[discovery] index = true`): a
    /// second run skips reading unchanged SKILL.md files.
    #[arg(long)]
    pub index: bool,
}

/// The loaded config and the `--root` override: the host's
/// [`HostConfig`] (reached through `Deref`: `ctx.config`, `ctx.cwd`,
/// `ctx.discovery_options()`), opened from the flags by the host's one
/// rule ([`HostSpec`]).
pub struct Context {
    resolved: HostConfig,
    /// The `--config` given, if any.
    pub config_flag: Option<PathBuf>,
}

impl std::ops::Deref for Context {
    type Target = HostConfig;
    fn deref(&self) -> &HostConfig {
        &self.resolved
    }
}

impl Context {
    /// Reads the config the options name (or the default ones, merged).
    pub fn new(args: &DeckArgs) -> Result<Self, CliError> {
        let spec = HostSpec {
            config: args.config.clone(),
            roots: (!args.roots.is_empty()).then(|| args.roots.clone()),
            cwd: None,
            index: args.index,
        };
        Ok(Context {
            resolved: spec.load()?,
            config_flag: args.config.clone(),
        })
    }

    /// Discovers the deck and reports on stderr what discovery skipped
    /// (errors, with file and line) and how many skills are shadowed.
    ///
    /// The deck lives until the process exits, so it is leaked rather than
    /// freed skill by skill just before exit (10,000 skills are ~200,000
    /// allocations; the OS reclaims them at once).
    pub fn deck(&self) -> &'static Deck {
        Box::leak(Box::new(self.reported_deck()))
    }

    /// A host over the deck ([`Context::deck`], reported the same way)
    /// under the config's options: for commands that compose what a host
    /// serves (the catalog), so they apply its rules. Leaked like the deck.
    pub fn host(&self) -> Result<&'static Host, CliError> {
        let options = self.host_options()?;
        let host = Host::with_deck(options, self.reported_deck())?;
        Ok(Box::leak(Box::new(host)))
    }

    fn reported_deck(&self) -> Deck {
        let deck = skilldeck::discover(&self.discovery_options());
        for d in deck.load_problems() {
            // An error kept a skill out; a warning here is a walk cut short
            // (it reads `...: warning[walk-limit]: ...`).
            let what = if d.severity == Severity::Error {
                "skipped: "
            } else {
                ""
            };
            eprintln!("{what}{}", crate::render::safe(&d.to_string()));
        }
        let shadowed = deck.shadowed().len();
        if shadowed > 0 {
            eprintln!(
                "note: {shadowed} shadowed skill{} (see `skilldeck list --shadowed`)",
                if shadowed == 1 { "" } else { "s" }
            );
        }
        deck
    }

    /// Discovers the deck without reporting anything.
    pub fn quiet_deck(&self) -> &'static Deck {
        Box::leak(Box::new(skilldeck::discover(&self.discovery_options())))
    }
}

/// Shell completion of a skill name: the skills discovered from the
/// current folder with the default config (options typed on the same line
/// are not seen by the completer).
pub fn skill_names() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let Ok(ctx) = Context::new(&DeckArgs::default()) else {
            return Vec::new();
        };
        ctx.quiet_deck()
            .skills()
            .iter()
            .map(|s| CompletionCandidate::new(s.name.as_str()))
            .collect()
    })
}
