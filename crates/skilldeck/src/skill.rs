//! A loaded skill: its catalog metadata, where it came from, and how the
//! host may use it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::error::Error;
use crate::fs::read::read_frontmatter_prefix;
use crate::spec::SkillType;
use crate::spec::fields::Frontmatter;
use crate::spec::options::ValidationOptions;
use crate::spec::requires::Requirements;
use crate::spec::tools::SkillTool;
use crate::spec::yaml::NodeKind;

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
    /// A root the operator manages (`[discovery] managed`, default
    /// `/etc/skilldeck/skills`), and the skills a registry agent's lock
    /// materialises.
    Managed,
    /// The example skills compiled into skilldeck.
    Bundled,
    /// A root from the config file's `roots` or `--root`.
    Extra,
}

impl Scope {
    /// Every scope, highest precedence first: explicit, then project >
    /// user > managed > bundled > extra (the order seed 004 and the peers
    /// use: the closer to the work, the stronger).
    pub const ALL: [Scope; 6] = [
        Scope::Explicit,
        Scope::Project,
        Scope::User,
        Scope::Managed,
        Scope::Bundled,
        Scope::Extra,
    ];

    /// The lowercase name (`project`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Explicit => "explicit",
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Managed => "managed",
            Scope::Bundled => "bundled",
            Scope::Extra => "extra",
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
                format!("unknown scope '{s}' (expected explicit, project, user, managed, bundled or extra)")
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

/// One discovered skill: what hosts need on the hot path (catalog, lookup,
/// activation), nothing more. The rest of the frontmatter (`license`,
/// `compatibility`, `metadata`, `allowed-tools`, other fields) is read from
/// the file on demand with [`Skill::frontmatter`].
///
/// A skill holds one path: its `SKILL.md`; the folder is that file's parent
/// ([`Skill::dir`]). At 100,000 skills every byte per skill is 100 KB.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The skill's name (frontmatter `name`, else its folder name).
    pub name: String,
    /// The frontmatter `description`.
    pub description: String,
    /// The skill folder with every symlink resolved, when that differs from
    /// [`Skill::dir`] (`None`: the folder is already real). Use
    /// [`Skill::real_dir`].
    pub resolved_dir: Option<Box<Path>>,
    /// Its `SKILL.md` (or `skill.md`), absolute, as found under its root
    /// (symlinks kept); its parent is the skill folder.
    pub skill_md: PathBuf,
    /// Where it was found.
    pub scope: Scope,
    /// The root it was found under (the skill folder itself for explicit
    /// skills); shared by every skill of that root.
    pub root: Arc<Path>,
    /// How hosts should expose it.
    pub mode: SkillMode,
    /// The frontmatter fields hosts act on (`disable-model-invocation`,
    /// `user-invocable`, `argument-hint`, `arguments`), packed: read them
    /// with [`Skill::model_invocable`], [`Skill::user_invocable`],
    /// [`Skill::argument_hint`] and [`Skill::argument_names`].
    pub host: HostFields,
}

/// Serialized as before the folder became derived: `name`, `description`,
/// `dir`, `skill_md`, `scope`, `root`, `mode` (the resolved folder and the
/// host fields are not part of the serialized form).
impl Serialize for Skill {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Skill", 7)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("description", &self.description)?;
        s.serialize_field("dir", self.dir())?;
        s.serialize_field("skill_md", &self.skill_md)?;
        s.serialize_field("scope", &self.scope)?;
        s.serialize_field("root", &self.root)?;
        s.serialize_field("mode", &self.mode)?;
        s.end()
    }
}

/// The host fields of a skill's frontmatter, compact: two flags inline, and
/// the rarely present argument hint and names behind one pointer (a skill
/// without them costs no allocation).
///
/// It also carries what the catalog would otherwise recompute on every
/// render (see `catalog::CatalogHints`): set only by [`crate::Deck::new`],
/// which then hands its skills out read-only. They are not serialized,
/// compared or cloned (a clone may be edited, so it starts without them and
/// renders through the checking path), and they fit in the struct's
/// padding: no extra bytes per skill.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct HostFields {
    /// [`HostFields::NO_MODEL`] | [`HostFields::NO_USER`].
    flags: u8,
    /// Catalog hints of this skill's texts; 0 = none (check everything).
    #[serde(skip)]
    catalog: u16,
    /// `argument-hint` and `arguments`, when either is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    args: Option<Box<HostArgs>>,
    /// `tools` and `requires`, when either is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ext: Option<Box<HostExt>>,
}

/// The skilldeck extension fields: declared tools and requirements.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct HostExt {
    tools: Vec<SkillTool>,
    requires: Vec<Requirements>,
    /// Seed 004's `skill_type`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skill_type: Option<SkillType>,
    /// Why the skill is not eligible on this machine (`None`: eligible, or
    /// not assessed). Set by [`crate::Deck::new`] from the `requires`
    /// blocks (so only skills with an extension box ever hold one); never
    /// stored in the index (it depends on the machine), not compared.
    #[serde(skip)]
    ineligible: Option<Box<str>>,
    /// What was wrong with the declared tools when the skill was parsed (a
    /// tool left out, and why), kept with the skill (and in the index) so
    /// every face reports it: [`Skill::tool_diagnostics`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    notes: Vec<ToolNote>,
}

/// One tool problem found at parse time, as the index stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ToolNote {
    code: String,
    message: String,
    line: Option<u32>,
    column: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    help: Option<String>,
}

impl PartialEq for HostExt {
    fn eq(&self, other: &Self) -> bool {
        self.tools == other.tools
            && self.requires == other.requires
            && self.skill_type == other.skill_type
            && self.notes == other.notes
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct HostArgs {
    hint: Option<Box<str>>,
    names: Box<[Box<str>]>,
}

impl Clone for HostFields {
    fn clone(&self) -> Self {
        HostFields {
            flags: self.flags,
            // A clone's texts may be edited: its hints would go stale.
            catalog: 0,
            args: self.args.clone(),
            ext: self.ext.clone(),
        }
    }
}

impl PartialEq for HostFields {
    fn eq(&self, other: &Self) -> bool {
        self.flags == other.flags && self.args == other.args && self.ext == other.ext
    }
}

impl Eq for HostFields {}

impl HostFields {
    /// The catalog hints (0 when not computed).
    pub(crate) fn catalog_hints(&self) -> u16 {
        self.catalog
    }

    /// Sets the catalog hints: only for skills that can no longer change.
    pub(crate) fn set_catalog_hints(&mut self, hints: u16) {
        self.catalog = hints;
    }

    /// `disable-model-invocation: true`.
    const NO_MODEL: u8 = 1;
    /// `user-invocable: false`.
    const NO_USER: u8 = 2;
    /// `[resources] allow-hardlinks = true`: hard-linked files are served.
    const HARDLINKS: u8 = 4;

    /// Sets whether the skill's hard-linked files are served (from the
    /// config, not the frontmatter: set on every load, index or not).
    pub(crate) fn set_allow_hardlinks(&mut self, allow: bool) {
        if allow {
            self.flags |= Self::HARDLINKS;
        } else {
            self.flags &= !Self::HARDLINKS;
        }
    }

    /// The host fields of a parsed frontmatter (its `extra` fields).
    pub fn from_frontmatter(fm: &Frontmatter) -> Self {
        let mut flags = 0;
        if extra_bool(fm, "disable-model-invocation") == Some(true) {
            flags |= Self::NO_MODEL;
        }
        if extra_bool(fm, "user-invocable") == Some(false) {
            flags |= Self::NO_USER;
        }
        let hint = extra_text(fm, "argument-hint").map(Box::from);
        let names: Box<[Box<str>]> = argument_names_of(fm).into_iter().map(Box::from).collect();
        let args =
            (hint.is_some() || !names.is_empty()).then(|| Box::new(HostArgs { hint, names }));
        let ext = (!fm.tools.is_empty() || !fm.requires.is_empty() || fm.skill_type.is_some())
            .then(|| {
                Box::new(HostExt {
                    tools: fm.tools.clone(),
                    requires: fm.requires.clone(),
                    skill_type: fm.skill_type,
                    ineligible: None,
                    notes: Vec::new(),
                })
            });
        HostFields {
            flags,
            catalog: 0,
            args,
            ext,
        }
    }

    /// Keeps the tool problems among `diagnostics` (a parse of this
    /// skill's `SKILL.md`), so they outlive the parse.
    pub(crate) fn keep_tool_problems(&mut self, diagnostics: &[Diagnostic]) {
        let notes: Vec<ToolNote> = diagnostics
            .iter()
            .filter(|d| d.code.is_tool_problem())
            .map(|d| ToolNote {
                code: d.code.as_str().to_owned(),
                message: d.message.clone(),
                line: d.line,
                column: d.column,
                help: d.help.clone(),
            })
            .collect();
        if notes.is_empty() {
            return;
        }
        self.ext.get_or_insert_with(Box::default).notes = notes;
    }

    /// Records the eligibility verdict (`None`: eligible).
    pub(crate) fn set_ineligible(&mut self, reason: Option<String>) {
        match (reason, self.ext.as_mut()) {
            (None, None) => {}
            (reason, Some(ext)) => ext.ineligible = reason.map(Box::from),
            (Some(reason), None) => {
                self.ext = Some(Box::new(HostExt {
                    ineligible: Some(reason.into()),
                    ..HostExt::default()
                }));
            }
        }
    }

    /// Why the skill is not eligible, if it is not.
    fn ineligible(&self) -> Option<&str> {
        self.ext.as_ref()?.ineligible.as_deref()
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.args.as_ref().map_or(0, |a| {
            std::mem::size_of::<HostArgs>()
                + a.hint.as_ref().map_or(0, |h| h.len())
                + a.names.len() * std::mem::size_of::<Box<str>>()
                + a.names.iter().map(|n| n.len()).sum::<usize>()
        }) + self.ext.as_ref().map_or(0, |e| {
            std::mem::size_of::<HostExt>()
                + e.tools.len() * std::mem::size_of::<SkillTool>()
                + e.tools
                    .iter()
                    .map(|t| {
                        t.description.len()
                            + t.run.as_ref().map_or(0, String::len)
                            + t.name.as_str().len()
                    })
                    .sum::<usize>()
                + e.requires.len() * std::mem::size_of::<Requirements>()
                + e.ineligible.as_ref().map_or(0, |r| r.len())
                + e.notes
                    .iter()
                    .map(|n| std::mem::size_of::<ToolNote>() + n.code.len() + n.message.len())
                    .sum::<usize>()
        })
    }
}

fn extra_text<'a>(fm: &'a Frontmatter, key: &str) -> Option<&'a str> {
    fm.extra
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| match &v.kind {
            NodeKind::Scalar(s) => Some(s.as_str()),
            _ => None,
        })
}

fn extra_bool(fm: &Frontmatter, key: &str) -> Option<bool> {
    match extra_text(fm, key)? {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Names from an `arguments` field (a list, or a space-separated string).
fn argument_names_of(fm: &Frontmatter) -> Vec<String> {
    let Some((_, node)) = fm.extra.iter().find(|(k, _)| k == "arguments") else {
        return Vec::new();
    };
    match &node.kind {
        NodeKind::Scalar(s) => s.split_whitespace().map(str::to_owned).collect(),
        NodeKind::Seq(items) => {
            items
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
                .collect()
        }
        _ => Vec::new(),
    }
}

impl Skill {
    /// The skill folder with every symlink resolved: the containment root
    /// for resource reads.
    pub fn real_dir(&self) -> &Path {
        self.resolved_dir.as_deref().unwrap_or_else(|| self.dir())
    }

    /// The skill folder, absolute, as found under its root (symlinks kept):
    /// the parent of [`Skill::skill_md`].
    pub fn dir(&self) -> &Path {
        crate::fs::read::folder_of(&self.skill_md)
    }

    /// The served rule, stated once: a skill is served unless its mode is
    /// `off` or it is not eligible on this machine (its `requires`; see
    /// [`crate::deck::EligibilityContext`]). Such a skill stays in the deck,
    /// so errors can name it and say why, but nothing offers it: not the
    /// catalog, not the tool lists. Hosts ask `skilldeck_host::rules`, which
    /// builds on this.
    pub fn is_served(&self) -> bool {
        self.mode != SkillMode::Off && self.is_eligible()
    }

    /// False when the deck found this machine lacks what the skill
    /// `requires` ([`Skill::ineligible_reason`] says what).
    pub fn is_eligible(&self) -> bool {
        self.host.ineligible().is_none()
    }

    /// Why the skill is not eligible here (`needs 'jq' on PATH
    /// (requires.bins)`), if it is not.
    pub fn ineligible_reason(&self) -> Option<&str> {
        self.host.ineligible()
    }

    /// The tools the skill declares (`tools:`), each valid; empty for most
    /// skills. Offered only while the skill is served.
    pub fn tools(&self) -> &[SkillTool] {
        self.host.ext.as_ref().map_or(&[], |e| &e.tools)
    }

    /// What was wrong with the tools the skill declares, as warnings in
    /// its `SKILL.md` (a tool left out and why): empty for most skills.
    /// Discovery adds them to the deck's diagnostics, so `show`, `doctor`,
    /// the server's log and the bindings all see them.
    pub fn tool_diagnostics(&self) -> Vec<Diagnostic> {
        let Some(ext) = self.host.ext.as_ref() else {
            return Vec::new();
        };
        ext.notes
            .iter()
            .filter_map(|n| {
                let mut d = Diagnostic::new(Code::parse(&n.code)?, Severity::Warning, &n.message)
                    .in_file(&self.skill_md);
                d.line = n.line;
                d.column = n.column;
                d.help = n.help.clone();
                Some(d)
            })
            .collect()
    }

    /// Seed 004's `skill_type`, when the frontmatter gives one: a
    /// [`SkillType::LangchainTool`] package's tools are found by a host's
    /// sandboxed worker, not declared.
    pub fn skill_type(&self) -> Option<SkillType> {
        self.host.ext.as_ref().and_then(|e| e.skill_type)
    }

    /// The tool named `name`, if the skill declares it.
    pub fn tool(&self, name: &str) -> Option<&SkillTool> {
        self.tools().iter().find(|t| t.name.as_str() == name)
    }

    /// The skill's `requires` blocks (top-level, then `metadata.openclaw`
    /// and aliases).
    pub fn requirements(&self) -> &[Requirements] {
        self.host.ext.as_ref().map_or(&[], |e| &e.requires)
    }

    /// True when files with more than one hard link are served from this
    /// skill (`[resources] allow-hardlinks = true`); by default they are
    /// refused and left out of listings.
    pub fn allows_hardlinks(&self) -> bool {
        self.host.flags & HostFields::HARDLINKS != 0
    }

    /// False when the frontmatter says `disable-model-invocation: true` or the
    /// mode keeps it out of the catalog (`manual`, `off`).
    pub fn model_invocable(&self) -> bool {
        self.host.flags & HostFields::NO_MODEL == 0
            && self.mode != SkillMode::Manual
            && self.is_served()
    }

    /// False when the frontmatter says `user-invocable: false` or the mode is `off`.
    pub fn user_invocable(&self) -> bool {
        self.host.flags & HostFields::NO_USER == 0 && self.is_served()
    }

    /// The `argument-hint` field, if any.
    pub fn argument_hint(&self) -> Option<&str> {
        self.host.args.as_ref()?.hint.as_deref()
    }

    /// Names from an `arguments` field (a list, or a space-separated string):
    /// each becomes a `$name` placeholder on activation.
    pub fn argument_names(&self) -> Vec<String> {
        self.host.args.as_ref().map_or_else(Vec::new, |a| {
            a.names.iter().map(|n| n.to_string()).collect()
        })
    }

    /// The whole typed frontmatter, read again from `SKILL.md` (the deck
    /// keeps only the fields hosts act on): `license`, `compatibility`,
    /// `metadata`, `allowed-tools` and every other field. Parsed leniently,
    /// as discovery loads skills; reflects the file as it is now.
    pub fn frontmatter(&self) -> Result<Frontmatter, Error> {
        self.frontmatter_with(&ValidationOptions {
            lints: false,
            ..ValidationOptions::lenient()
        })
    }

    /// [`Skill::frontmatter`] parsed with `options` (its mode and size cap;
    /// lints are never run). Reads through the same bounded, non-blocking
    /// reader as discovery, and only up to the end of the frontmatter.
    pub fn frontmatter_with(&self, options: &ValidationOptions) -> Result<Frontmatter, Error> {
        let fail = |d: crate::diagnostic::Diagnostic| Error::Frontmatter {
            name: self.name.clone(),
            diagnostic: Box::new(d),
        };
        let prefix =
            read_frontmatter_prefix(&self.skill_md, options.max_skill_md_bytes).map_err(fail)?;
        let options = ValidationOptions {
            lints: false,
            ..options.clone()
        };
        let checked = crate::spec::validate::check_text(&prefix, Some(self.dir()), &options);
        match checked.frontmatter {
            Some(fm) => Ok(fm),
            None => {
                let d = checked
                    .diagnostics
                    .into_iter()
                    .find(crate::diagnostic::Diagnostic::is_error)
                    .unwrap_or_else(|| {
                        crate::diagnostic::Diagnostic::new(
                            crate::diagnostic::Code::InvalidYaml,
                            crate::diagnostic::Severity::Error,
                            "the frontmatter could not be read",
                        )
                    });
                Err(fail(d.in_file(&self.skill_md)))
            }
        }
    }
}

impl Skill {
    /// Bytes this skill holds on the heap (string and list capacities, not
    /// allocator overhead): what a deck of many skills costs. The struct
    /// itself is counted by [`crate::Deck::heap_bytes`].
    pub fn heap_bytes(&self) -> usize {
        self.name.capacity()
            + self.description.capacity()
            + self
                .resolved_dir
                .as_ref()
                .map_or(0, |r| r.as_os_str().len())
            + self.skill_md.capacity()
            + self.host.heap_bytes()
    }

    /// The raw text a catalog needs: name, description and the paths.
    pub fn raw_bytes(&self) -> usize {
        self.name.len() + self.description.len() + self.skill_md.as_os_str().len()
    }
}
