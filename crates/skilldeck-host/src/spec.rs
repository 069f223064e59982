//! [`HostSpec`]: what every face opens a host from (the config file or the
//! merged default files, roots that replace the default ones, the working
//! folder project roots are looked for from), and [`HostConfig`], what it
//! resolves to. The CLI, the MCP server and the Python binding all open
//! their host through it, so the rules "an explicit `--config` is read
//! alone", "`--root` replaces the default roots, config roots stay" and
//! "relative paths are the config file's" hold the same everywhere.

use std::collections::BTreeMap;
use std::path::PathBuf;

use skilldeck::{Config, DiscoveryOptions};

use crate::error::Error;
use crate::host::Host;
use crate::options::HostOptions;

/// Where a host's configuration and roots come from.
#[derive(Debug, Clone, Default)]
pub struct HostSpec {
    /// A config file read alone (`--config`); `None`: the user file under
    /// `./skilldeck.toml`, merged ([`Config::discover_layers`]).
    pub config: Option<PathBuf>,
    /// Roots replacing the default ones (project, user, managed, bundled);
    /// `None`: the defaults. Config `roots` and `[[skill]]` entries stay.
    pub roots: Option<Vec<PathBuf>>,
    /// Where project roots are looked for; `None`: the working folder.
    pub cwd: Option<PathBuf>,
    /// Use the on-disk metadata index (also `[discovery] index`).
    pub index: bool,
}

/// A [`HostSpec`] resolved: the configuration in force and where it came
/// from.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The configuration in force (defaults when no file exists).
    pub config: Config,
    /// The config files read, lowest precedence first.
    pub config_files: Vec<PathBuf>,
    /// Each key a config file set, and the file whose value is in force.
    pub config_origins: BTreeMap<String, PathBuf>,
    /// Roots replacing the default ones (`None`: the defaults).
    pub roots: Option<Vec<PathBuf>>,
    /// Where project roots are looked for.
    pub cwd: PathBuf,
}

impl HostSpec {
    /// Reads the configuration this spec names.
    pub fn load(&self) -> Result<HostConfig, Error> {
        let (config_files, config_origins, mut config) =
            match Config::discover_layers(self.config.as_deref())? {
                Some(layers) => (layers.files, layers.origins, layers.config),
                None => (Vec::new(), BTreeMap::new(), Config::default()),
            };
        config.discovery.index |= self.index;
        let cwd = match &self.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir().map_err(|source| Error::Io {
                path: PathBuf::from("."),
                source,
            })?,
        };
        Ok(HostConfig {
            config,
            config_files,
            config_origins,
            roots: self.roots.clone(),
            cwd,
        })
    }

    /// Reads the configuration and opens a host over it (discovery runs).
    pub fn open(&self) -> Result<(Host, HostConfig), Error> {
        let resolved = self.load()?;
        let host = Host::new(resolved.host_options()?)?;
        Ok((host, resolved))
    }
}

impl HostConfig {
    /// Discovery options: the config's, with [`HostConfig::roots`]
    /// replacing the default roots when given.
    pub fn discovery_options(&self) -> DiscoveryOptions {
        DiscoveryOptions::from_config(&self.config, &self.cwd, self.roots.as_deref())
    }

    /// The host's options ([`HostOptions::from_config`] over
    /// [`HostConfig::discovery_options`]).
    pub fn host_options(&self) -> Result<HostOptions, skilldeck::Error> {
        HostOptions::from_config(&self.config, self.discovery_options())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_spec_with_roots_replaces_the_default_roots_and_keeps_the_configs() {
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("skilldeck.toml");
        std::fs::write(&config, "roots = [\"vendor\"]\n").unwrap();
        let spec = HostSpec {
            config: Some(config.clone()),
            roots: Some(vec![tmp.path().join("mine")]),
            cwd: Some(tmp.path().to_path_buf()),
            index: true,
        };
        let resolved = spec.load().unwrap();
        assert_eq!(resolved.config_files, [config]);
        assert!(resolved.config.discovery.index, "the index flag is applied");
        let roots: Vec<PathBuf> = resolved
            .discovery_options()
            .roots
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(roots, [tmp.path().join("mine"), tmp.path().join("vendor")]);
    }
}
