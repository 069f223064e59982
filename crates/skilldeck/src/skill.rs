//! A loaded skill: its catalog metadata, where it came from, and how the
//! host may use it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::validate::Frontmatter;
use crate::yaml::NodeKind;

/// Where a skill was found. Declaration order is precedence: when two skills
/// share a name, the one with the smaller scope wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Listed by name and path in the config file.
    Explicit,
    /// A project root (`.agents/skills`, `.claude/skills`, `.skills`) in the
    /// current folder or an ancestor up to the repository root.
    Project,
    /// A user root (`~/.agents/skills`, `~/.claude/skills`,
    /// `$XDG_CONFIG_HOME/skilldeck/skills`).
    User,
    /// A root from the config file's `roots` or `--root`.
    Extra,
    /// The example skills compiled into skilldeck.
    Bundled,
}

impl Scope {
    /// Every scope, highest precedence first.
    pub const ALL: [Scope; 5] = [
        Scope::Explicit,
        Scope::Project,
        Scope::User,
        Scope::Extra,
        Scope::Bundled,
    ];

    /// The lowercase name (`project`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Explicit => "explicit",
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Extra => "extra",
            Scope::Bundled => "bundled",
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| {
                format!("unknown scope '{s}' (expected explicit, project, user, extra or bundled)")
            })
    }
}

/// How a host should expose a skill (config `modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillMode {
    /// Always in the catalog, never shortened or dropped by a budget.
    Pinned,
    /// In the catalog; the budget may shorten or drop it (default).
    #[default]
    Auto,
    /// In the catalog by name only, without its description.
    NameOnly,
    /// Not in the catalog; the user can still activate it by name.
    Manual,
    /// Not loaded for use at all.
    Off,
}

impl SkillMode {
    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillMode::Pinned => "pinned",
            SkillMode::Auto => "auto",
            SkillMode::NameOnly => "name-only",
            SkillMode::Manual => "manual",
            SkillMode::Off => "off",
        }
    }
}

/// One discovered skill: metadata only (the body is read on activation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skill {
    /// The skill's name (frontmatter `name`, else its folder name).
    pub name: String,
    /// The frontmatter `description`.
    pub description: String,
    /// The skill folder, absolute, as found under its root (symlinks kept).
    pub dir: PathBuf,
    /// The skill folder with every symlink resolved, when that differs from
    /// `dir` (`None`: `dir` is already real). Use [`Skill::real_dir`].
    #[serde(skip)]
    pub resolved_dir: Option<PathBuf>,
    /// Its `SKILL.md`, absolute, as found.
    pub skill_md: PathBuf,
    /// Where it was found.
    pub scope: Scope,
    /// The root it was found under (the skill folder itself for explicit
    /// skills); shared by every skill of that root.
    pub root: Arc<Path>,
    /// How hosts should expose it.
    pub mode: SkillMode,
    /// The rest of the typed frontmatter (host fields in `extra`); its `name`
    /// and `description` were moved into the fields above.
    #[serde(skip)]
    pub frontmatter: Frontmatter,
}

impl Skill {
    /// The skill folder with every symlink resolved: the containment root
    /// for resource reads.
    pub fn real_dir(&self) -> &Path {
        self.resolved_dir.as_deref().unwrap_or(&self.dir)
    }

    fn extra_text(&self, key: &str) -> Option<&str> {
        self.frontmatter
            .extra
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| match &v.kind {
                NodeKind::Scalar(s) => Some(s.as_str()),
                _ => None,
            })
    }

    fn extra_bool(&self, key: &str) -> Option<bool> {
        match self.extra_text(key)? {
            "true" | "True" | "TRUE" => Some(true),
            "false" | "False" | "FALSE" => Some(false),
            _ => None,
        }
    }

    /// False when the frontmatter says `disable-model-invocation: true` or the
    /// mode keeps it out of the catalog (`manual`, `off`).
    pub fn model_invocable(&self) -> bool {
        self.extra_bool("disable-model-invocation") != Some(true)
            && !matches!(self.mode, SkillMode::Manual | SkillMode::Off)
    }

    /// False when the frontmatter says `user-invocable: false` or the mode is `off`.
    pub fn user_invocable(&self) -> bool {
        self.extra_bool("user-invocable") != Some(false) && self.mode != SkillMode::Off
    }

    /// The `argument-hint` field, if any.
    pub fn argument_hint(&self) -> Option<&str> {
        self.extra_text("argument-hint")
    }

    /// Names from an `arguments` field (a list, or a space-separated string):
    /// each becomes a `$name` placeholder on activation.
    pub fn argument_names(&self) -> Vec<String> {
        let Some((_, node)) = self
            .frontmatter
            .extra
            .iter()
            .find(|(k, _)| k == "arguments")
        else {
            return Vec::new();
        };
        match &node.kind {
            NodeKind::Scalar(s) => s.split_whitespace().map(str::to_owned).collect(),
            NodeKind::Seq(items) => items
                .iter()
                .filter_map(|i| match &i.kind {
                    NodeKind::Scalar(s) => Some(s.trim().to_owned()),
                    NodeKind::Map(entries) => entries
                        .iter()
                        .find(|(k, _)| k.text == "name")
                        .and_then(|(_, v)| match &v.kind {
                            NodeKind::Scalar(s) => Some(s.trim().to_owned()),
                            _ => None,
                        }),
                    _ => None,
                })
                .filter(|s| !s.is_empty())
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl Skill {
    /// Bytes this skill holds on the heap (string and list capacities, not
    /// allocator overhead): what a deck of many skills costs.
    pub fn heap_bytes(&self) -> usize {
        let fm = &self.frontmatter;
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::capacity);
        self.name.capacity()
            + self.description.capacity()
            + self.dir.capacity()
            + self.resolved_dir.as_ref().map_or(0, PathBuf::capacity)
            + self.skill_md.capacity()
            + opt(&fm.name)
            + opt(&fm.description)
            + opt(&fm.license)
            + opt(&fm.compatibility)
            + fm.metadata.capacity() * std::mem::size_of::<(String, String)>()
            + fm.metadata
                .iter()
                .map(|(k, v)| k.capacity() + v.capacity())
                .sum::<usize>()
            + fm.allowed_tools.capacity() * std::mem::size_of::<String>()
            + fm.allowed_tools.iter().map(String::capacity).sum::<usize>()
            + fm.extra.capacity() * std::mem::size_of::<(String, crate::yaml::Node)>()
            + fm.extra
                .iter()
                .map(|(k, v)| k.capacity() + v.heap_bytes())
                .sum::<usize>()
    }

    /// The raw text a catalog needs: name, description and the paths.
    pub fn raw_bytes(&self) -> usize {
        self.name.len()
            + self.description.len()
            + self.dir.as_os_str().len()
            + self.skill_md.as_os_str().len()
    }
}
