//! Where a lock entry of a channel other than git stands against its
//! source now, for `outdated` and `update` ([`crate::git_source`] holds
//! the commands and the git channel):
//!
//! - **OCI**: an entry installed by tag is recorded as
//!   `oci://REGISTRY/REPOSITORY:TAG@DIGEST` and follows the tag (the tag's
//!   manifest digest now, asked with a `HEAD`; `update` pulls it and
//!   checks every byte); one recorded as `...@DIGEST` alone is a pin and
//!   never outdated.
//! - **Well-known index** (`wellknown+INDEX#NAME`): follows the index; the
//!   entry's artifact is downloaded (its digest checked against the index)
//!   and its fingerprint compared with the lock's.
//! - **Marketplace entry** (`marketplace:LOCATION#PLUGIN:SKILL`): follows
//!   the marketplace; the entry's plugin is read again (a git plugin at
//!   its ref's commit now) and the skill's fingerprint (and commit)
//!   compared with the lock's.
//!
//! Nothing here writes: `update` installs what [`Now::fetched`] holds in
//! one all-or-nothing install.

use std::path::Path;

use skilldeck::Digest;
use skilldeck_package::{LockEntry, Source};
use skilldeck_source::marketplace::FetchedPlugin;
use skilldeck_source::oci::{self, OciRef, Pulled};

use crate::error::CliError;
use crate::marketplace_source;
use crate::oci_source::{self, OciArgs};
use crate::wellknown_source;

/// A channel `outdated` and `update` follow besides git.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `oci://...`.
    Oci,
    /// `wellknown+https://...#NAME`.
    WellKnown,
    /// `marketplace:...#PLUGIN:SKILL`.
    Marketplace,
}

impl Channel {
    /// The channel of a lock entry's source, if it is one of these.
    pub fn of(source: &str) -> Option<Channel> {
        if oci_source::is_oci(source) {
            Some(Channel::Oci)
        } else if marketplace_source::is_marketplace(source) {
            Some(Channel::Marketplace)
        } else if source.starts_with(skilldeck_source::wellknown::LOCK_PREFIX) {
            Some(Channel::WellKnown)
        } else {
            None
        }
    }

    /// Its name in `outdated --output json` (`oci`, `well-known`,
    /// `marketplace`).
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Oci => "oci",
            Channel::WellKnown => "well-known",
            Channel::Marketplace => "marketplace",
        }
    }
}

/// How `outdated` and `update` reach OCI registries and well-known hosts.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReachArgs {
    #[command(flatten)]
    oci: OciArgs,
    /// Allow plain http:// well-known indexes on other hosts than this
    /// machine (loopback http is always allowed).
    #[arg(long)]
    allow_http: bool,
}

/// What an update would install, fetched and checked.
pub enum Fetched {
    /// An OCI artifact pulled at the tag's digest now.
    Oci(Pulled),
    /// A well-known artifact, its digest checked.
    WellKnown(wellknown_source::Fetched),
    /// A marketplace entry's plugin (its folder lives while this does),
    /// and the skill's source in it.
    Plugin {
        /// Keeps a git plugin's folder until the install is done.
        _plugin: FetchedPlugin,
        /// The skill's source.
        source: Source,
    },
}

impl Fetched {
    /// The install source.
    pub fn source(&self) -> Source {
        match self {
            Fetched::Oci(p) => p.to_source(),
            Fetched::WellKnown(f) => f.source.clone(),
            Fetched::Plugin { source, .. } => source.clone(),
        }
    }
}

/// Where one entry stands now.
pub struct Now {
    /// `tag` or `digest` (OCI), `index`, `marketplace-entry`.
    pub kind: &'static str,
    /// What the lock pins: the manifest digest (OCI), else the
    /// fingerprint.
    pub locked: String,
    /// The same, now.
    pub current: String,
    /// A pin: never outdated, `update` keeps it.
    pub pinned: bool,
    /// The source names other content than the lock's.
    pub changed: bool,
    /// The fingerprint now, when it was fetched.
    pub fingerprint: Option<Digest>,
    /// A git plugin's commit now.
    pub commit: Option<String>,
    /// The source the lock would record after an update.
    pub source: String,
    /// What to install, when asked to fetch and it changed.
    pub fetched: Option<Fetched>,
}

fn oci_failed(e: skilldeck_source::Error) -> CliError {
    CliError::Usage(e.to_string())
}

/// Where the entry `name` of channel `channel` stands now. `fetch`: an
/// update is coming, so pull what changed (OCI; the other channels fetch
/// anyway to know whether it changed).
pub fn now(
    channel: Channel,
    name: &str,
    entry: &LockEntry,
    lockfile: &Path,
    reach: &ReachArgs,
    fetch: bool,
    tmp: &Path,
) -> Result<Now, CliError> {
    match channel {
        Channel::Oci => oci_now(entry, reach, fetch),
        Channel::WellKnown => {
            let f = wellknown_source::fetch_now(name, entry, reach.allow_http, tmp)?;
            let changed = f.fingerprint != entry.fingerprint;
            Ok(Now {
                kind: "index",
                locked: entry.fingerprint.to_string(),
                current: f.fingerprint.to_string(),
                pinned: false,
                changed,
                fingerprint: Some(f.fingerprint),
                commit: None,
                source: entry.source.clone(),
                fetched: changed.then_some(Fetched::WellKnown(f)),
            })
        }
        Channel::Marketplace => {
            let (plugin, source, fingerprint) =
                marketplace_source::fetch_now(name, entry, lockfile, tmp)?;
            let commit = plugin.commit.clone();
            let changed = fingerprint != entry.fingerprint || commit != entry.commit;
            Ok(Now {
                kind: "marketplace-entry",
                locked: entry.fingerprint.to_string(),
                current: fingerprint.to_string(),
                pinned: false,
                changed,
                fingerprint: Some(fingerprint),
                commit,
                source: entry.source.clone(),
                fetched: changed.then_some(Fetched::Plugin {
                    _plugin: plugin,
                    source,
                }),
            })
        }
    }
}

fn oci_now(entry: &LockEntry, reach: &ReachArgs, fetch: bool) -> Result<Now, CliError> {
    let reference = OciRef::parse(&entry.source).map_err(oci_failed)?;
    let locked = reference.digest.ok_or_else(|| {
        CliError::Usage(format!(
            "{}: the lock records no manifest digest: install it again to record one",
            entry.source
        ))
    })?;
    let Some(tag) = reference.followed_tag() else {
        return Ok(Now {
            kind: "digest",
            locked: locked.to_string(),
            current: locked.to_string(),
            pinned: true,
            changed: false,
            fingerprint: None,
            commit: None,
            source: entry.source.clone(),
            fetched: None,
        });
    };
    let at_tag = reference.at_tag();
    let options = reach.oci.options(&at_tag).map_err(oci_failed)?;
    let current = oci::resolve(&at_tag, &options).map_err(oci_failed)?;
    let changed = current != locked;
    let mut now = Now {
        kind: "tag",
        locked: locked.to_string(),
        current: current.to_string(),
        pinned: false,
        changed,
        fingerprint: None,
        commit: None,
        source: at_tag.lock_source(&current),
        fetched: None,
    };
    if changed && fetch {
        // Pulled at the digest just resolved (the tag may move again
        // meanwhile: what was shown is what is installed), recorded with
        // the tag it follows.
        let pinned = OciRef {
            tag: Some(tag.to_owned()),
            ..reference.at_digest(current)
        };
        let pulled = oci::pull(&pinned, None, &options).map_err(oci_failed)?;
        oci_source::note(&pulled);
        now.fingerprint = Some(pulled.fingerprint);
        let mut pulled = pulled;
        pulled.source = now.source.clone();
        now.fetched = Some(Fetched::Oci(pulled));
    }
    Ok(now)
}
