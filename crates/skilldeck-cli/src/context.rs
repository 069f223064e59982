//! What every deck-using command shares: the config, the roots, the deck.

use std::path::PathBuf;

use skilldeck::{Config, Deck, DiscoveryOptions, Severity};

use crate::error::CliError;

/// The loaded config and the `--root` override.
pub struct Context {
    /// The config file (or defaults).
    pub config: Config,
    /// `--root` folders; empty means the default roots.
    pub roots: Vec<PathBuf>,
    /// The current folder.
    pub cwd: PathBuf,
}

impl Context {
    pub fn new(config: Config, roots: Vec<PathBuf>) -> Result<Self, CliError> {
        let cwd = std::env::current_dir().map_err(|e| CliError::Io {
            path: PathBuf::from("."),
            source: e,
        })?;
        Ok(Context { config, roots, cwd })
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
        let deck = skilldeck::discover(&self.discovery_options());
        for d in deck.diagnostics() {
            if d.severity == Severity::Error {
                eprintln!("skipped: {d}");
            }
        }
        let shadowed = deck.shadowed().len();
        if shadowed > 0 {
            eprintln!(
                "note: {shadowed} shadowed skill{} (see `skilldeck list --shadowed`)",
                if shadowed == 1 { "" } else { "s" }
            );
        }
        Box::leak(Box::new(deck))
    }
}
