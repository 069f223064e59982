//! What every deck-using command shares: the skill-source options, the
//! config, the roots, the deck.

use std::path::PathBuf;

use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use skilldeck::{Config, Deck, DiscoveryOptions, Severity};

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

/// The loaded config and the `--root` override.
pub struct Context {
    /// The config file (or defaults).
    pub config: Config,
    /// The config files read, lowest precedence first (the user's, then
    /// the project's; or the one `--config` named).
    pub config_files: Vec<PathBuf>,
    /// Each key a config file set, and the file whose value is in force.
    pub config_origins: std::collections::BTreeMap<String, PathBuf>,
    /// The `--config` given, if any.
    pub config_flag: Option<PathBuf>,
    /// `--root` folders; empty means the default roots.
    pub roots: Vec<PathBuf>,
    /// The current folder.
    pub cwd: PathBuf,
}

impl Context {
    /// Reads the config the options name (or the default one).
    pub fn new(args: &DeckArgs) -> Result<Self, CliError> {
        let (config_files, config_origins, mut config) =
            match Config::discover_layers(args.config.as_deref())? {
                Some(layers) => (layers.files, layers.origins, layers.config),
                None => (Vec::new(), Default::default(), Config::default()),
            };
        config.discovery.index |= args.index;
        let cwd = std::env::current_dir().map_err(|e| CliError::Io {
            path: PathBuf::from("."),
            source: e,
        })?;
        Ok(Context {
            config,
            config_files,
            config_origins,
            config_flag: args.config.clone(),
            roots: args.roots.clone(),
            cwd,
        })
    }

    /// Discovery options from the config and flags.
    pub fn discovery_options(&self) -> DiscoveryOptions {
        let override_roots = (!self.roots.is_empty()).then_some(self.roots.as_slice());
        DiscoveryOptions::from_config(&self.config, &self.cwd, override_roots)
    }

    /// Discovers the deck and reports on stderr what discovery skipped
    /// (errors, with file and line) and how many skills are shadowed.
    ///
    /// The deck lives until the process exits, so it is leaked rather than
    /// freed skill by skill just before exit (10,000 skills are ~200,000
    /// allocations; the OS reclaims them at once).
    pub fn deck(&self) -> &'static Deck {
        let deck = self.quiet_deck();
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
