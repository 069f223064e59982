//! What a skill needs from the machine to be offered: openclaw's
//! `metadata.openclaw.requires` (and its `clawdbot` / `moltbot` aliases) and
//! skilldeck's top-level `requires`, all of one shape:
//!
//! ```yaml
//! requires:
//!   bins: [curl, jq]        # every one on PATH
//!   anyBins: [rg, grep]     # at least one on PATH
//!   env: [GITHUB_TOKEN]     # set and non-empty
//!   os: [linux, darwin]     # one of (Node's names: linux, darwin, win32, ...)
//!   config: [exec.enabled]  # see `deck::eligibility`
//! ```
//!
//! This module only reads them (with diagnostics for malformed blocks); the
//! verdict is `deck::eligibility`'s, once per deck load.

use serde::{Deserialize, Serialize};

use crate::diagnostic::Code;
use crate::spec::options::{Sink, help};
use crate::spec::yaml::{Key, Node, NodeKind};

/// The `metadata` keys whose `requires` is read (openclaw and its former names).
pub const REQUIRES_METADATA_KEYS: [&str; 3] = ["openclaw", "clawdbot", "moltbot"];

/// The keys of a `requires` block.
pub const REQUIRES_KEYS: [&str; 5] = ["bins", "anyBins", "env", "os", "config"];

/// One `requires` block. Every present condition must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirements {
    /// Where it was written: `requires` or `metadata.openclaw.requires`, ...
    pub source: String,
    /// Executables that must all be on `PATH`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bins: Vec<String>,
    /// Executables of which at least one must be on `PATH` (empty: no condition).
    #[serde(default, rename = "anyBins", skip_serializing_if = "Vec::is_empty")]
    pub any_bins: Vec<String>,
    /// Environment variables that must be set and non-empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Operating systems (Node's `process.platform` names) of which the
    /// host's must be one (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub os: Vec<String>,
    /// Configuration keys that must be truthy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<String>,
}

impl Requirements {
    /// True when the block sets no condition.
    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
            && self.any_bins.is_empty()
            && self.env.is_empty()
            && self.os.is_empty()
            && self.config.is_empty()
    }
}

/// Every `requires` block of the frontmatter mapping `entries`: the
/// top-level one first, then those under `metadata`.
pub(crate) fn check_requires(entries: &[(Key, Node)], sink: &mut Sink<'_>) -> Vec<Requirements> {
    let mut out = Vec::new();
    if let Some((key, value)) = entries.iter().find(|(k, _)| k.text == "requires")
        && let Some(r) = parse_block("requires", key, value, sink)
    {
        out.push(r);
    }
    let metadata = entries.iter().find(|(k, _)| k.text == "metadata");
    if let Some((
        _,
        Node {
            kind: NodeKind::Map(meta),
            ..
        },
    )) = metadata
    {
        for host in REQUIRES_METADATA_KEYS {
            let Some((
                _,
                Node {
                    kind: NodeKind::Map(block),
                    ..
                },
            )) = meta.iter().find(|(k, _)| k.text == host)
            else {
                continue;
            };
            if let Some((key, value)) = block.iter().find(|(k, _)| k.text == "requires") {
                let source = format!("metadata.{host}.requires");
                if let Some(r) = parse_block(&source, key, value, sink) {
                    out.push(r);
                }
            }
        }
    }
    out
}

fn parse_block(source: &str, key: &Key, value: &Node, sink: &mut Sink<'_>) -> Option<Requirements> {
    let entries = match &value.kind {
        NodeKind::Null => return None,
        NodeKind::Map(entries) => entries,
        other => {
            let d = sink.push(
                Code::RequiresInvalid,
                Some(key.pos),
                format!("'{source}' must be a mapping, found {}", other.describe()),
            );
            help(d, format!("use the keys {}", REQUIRES_KEYS.join(", ")));
            return None;
        }
    };
    let mut r = Requirements {
        source: source.to_owned(),
        ..Requirements::default()
    };
    for (k, v) in entries {
        let list = match k.text.as_str() {
            "bins" => &mut r.bins,
            "anyBins" => &mut r.any_bins,
            "env" => &mut r.env,
            "os" => &mut r.os,
            "config" => &mut r.config,
            other => {
                let d = sink.push(
                    Code::RequiresInvalid,
                    Some(k.pos),
                    format!("Unknown key '{other}' in '{source}'; it is ignored"),
                );
                help(d, format!("the keys are {}", REQUIRES_KEYS.join(", ")));
                continue;
            }
        };
        match &v.kind {
            NodeKind::Null => {}
            NodeKind::Scalar(s) if !s.trim().is_empty() => list.push(s.trim().to_owned()),
            NodeKind::Seq(items) => {
                for item in items {
                    match &item.kind {
                        NodeKind::Scalar(s) if !s.trim().is_empty() => {
                            list.push(s.trim().to_owned());
                        }
                        other => {
                            sink.push(
                                Code::RequiresInvalid,
                                Some(item.pos),
                                format!(
                                    "'{source}.{}' must list names, found {}",
                                    k.text,
                                    other.describe()
                                ),
                            );
                        }
                    }
                }
            }
            other => {
                sink.push(
                    Code::RequiresInvalid,
                    Some(k.pos),
                    format!(
                        "'{source}.{}' must be a list of names, found {}",
                        k.text,
                        other.describe()
                    ),
                );
            }
        }
    }
    (!r.is_empty()).then_some(r)
}
